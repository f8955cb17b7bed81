"""Message: one answer of a conversation (or one streamed step of it)."""

from __future__ import annotations

from typing import Any, Iterator

from .base import Base


class Message(Base):
    """An answer: ``content`` (full text so far when streamed), ``reference`` (list of reference
    chunk dicts), ``role``, ``prompt``, ``id``, ``session_id``; other keys of the answer are kept.

    Agent answers also have ``event`` (the canvas event the message stands for: ``message``,
    ``message_end``, ``user_inputs``, ``workflow_finished``), ``user_inputs`` (when the run paused for
    input: the form, ``{field: definition}``; else None) and ``tips``, and — on the non-stream answer and
    the last streamed message — ``structured`` (``{component_id: value}``), ``usage``, and ``trace`` when
    asked for with ``return_trace``. These read None when the answer has none.

    Chat answers carry ``grounding`` on the message with the references: what the grounding check did,
    ``{"checked": bool, "replaced": [{"sentence", "unsupported", "replacement"}], "added": str | None}``
    (docs/builtin-chat-model.md); None on other messages.
    """

    _defaults = {
        "content": "",
        "reference": [],
        "role": "assistant",
        "prompt": None,
        "id": None,
        "session_id": None,
    }

    # Read as None when an answer does not carry them (class attributes: not part of to_json()).
    event = None
    user_inputs = None
    tips = None
    structured = None
    trace = None
    usage = None
    grounding = None

    def __iter__(self) -> Iterator["Message"]:
        # RAGFlow's SDK returns a one-item generator for non-streamed answers; iterating a
        # Message yields itself so code written as `for m in session.ask(q): ...` still runs.
        yield self


def reference_chunks(reference: Any) -> list:
    """The chunk list of an answer's ``reference`` ({"chunks": [...]}, {"chunks": {id: chunk}}, a plain
    list, or nothing)."""
    if isinstance(reference, dict):
        chunks = reference.get("chunks")
        if isinstance(chunks, dict):
            return list(chunks.values())
        return list(chunks) if isinstance(chunks, list) else []
    if isinstance(reference, list):
        return list(reference)
    return []


def reference_doc_aggs(reference: Any) -> list:
    """The per-document aggregates of an agent answer's ``reference`` (``doc_aggs``), as a list."""
    if isinstance(reference, dict):
        aggs = reference.get("doc_aggs")
        if isinstance(aggs, dict):
            return list(aggs.values())
        if isinstance(aggs, list):
            return list(aggs)
    return []
