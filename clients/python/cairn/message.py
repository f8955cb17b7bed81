"""Message: one answer of a conversation (or one streamed step of it)."""

from __future__ import annotations

from typing import Any, Iterator

from .base import Base


class Message(Base):
    """An answer: ``content`` (full text so far when streamed), ``reference`` (list of reference
    chunk dicts), ``role``, ``prompt``, ``id``, ``session_id``; other keys of the answer are kept."""

    _defaults = {
        "content": "",
        "reference": [],
        "role": "assistant",
        "prompt": None,
        "id": None,
        "session_id": None,
    }

    def __iter__(self) -> Iterator["Message"]:
        # RAGFlow's SDK returns a one-item generator for non-streamed answers; iterating a
        # Message yields itself so code written as `for m in session.ask(q): ...` still runs.
        yield self


def reference_chunks(reference: Any) -> list:
    """The chunk list of an answer's ``reference`` ({"chunks": [...]}, a plain list, or nothing)."""
    if isinstance(reference, dict):
        chunks = reference.get("chunks")
        return list(chunks) if isinstance(chunks, list) else []
    if isinstance(reference, list):
        return list(reference)
    return []
