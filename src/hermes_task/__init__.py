"""hermes-task: read-only inspection of Hermes Agent delegated-task transcripts."""

__version__ = "0.1.0"
