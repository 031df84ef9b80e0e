"""Everything that talks to a Hermes backend: the HTTP client, credentials and wire decoding."""
