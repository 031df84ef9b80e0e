"""`python -m hermes_task` runs the command-line interface."""

from hermes_task.cli import main

main()
