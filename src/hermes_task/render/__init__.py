"""Renderers: output documents to terminal text, plain lines or JSON, written to the stream
they are given (they read nothing and decide nothing)."""
