"""Exceptions raised by the Cairn client.

Every failed call raises :class:`CairnError` carrying the envelope's ``code`` and ``message``
(spec "Errors": 400, 401, 403, 404, 500, 1001 Invalid Chunk ID, 1002 Chunk Update Failed).
``str(error)`` is the message, as RAGFlow's SDK tests compare it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CairnError", "ChunkUpdateError"]


class CairnError(Exception):
    """A failure reported by the service (or found before sending a request).

    Attributes:
        code: the envelope code (equal to the HTTP status for 400/401/403/404/500; 1001/1002 for chunks).
        message: the human-readable message from the envelope.
        data: the envelope's ``data`` when the error carried one (e.g. partial results), else None.
        status: the HTTP status of the response, when there was one.
    """

    def __init__(self, message: str = "", code: int | None = None, data: Any = None, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data
        self.status = status

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class ChunkUpdateError(CairnError):
    """Raised by ``Chunk.update``; RAGFlow's SDK has the same class with ``code``, ``message``, ``details``."""

    def __init__(self, code: int | None = None, message: str = "", details: Any = None, status: int | None = None):
        super().__init__(message, code=code, data=details, status=status)
        self.details = details
