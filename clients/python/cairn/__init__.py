"""Cairn Python client (package skeleton; the client itself comes with the Python client issue)."""

__version__ = "0.1.0"
