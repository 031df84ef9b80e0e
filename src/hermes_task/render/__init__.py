"""Renderers: pure functions from output documents to text (terminal) or JSON."""
