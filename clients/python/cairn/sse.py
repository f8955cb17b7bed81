"""Parser for the service's server-sent event streams (conversation answers)."""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

from .errors import CairnError

__all__ = ["iter_events"]


def iter_events(lines: Iterable[bytes | str]) -> Iterator[dict[str, Any]]:
    """Yields the JSON object of each ``data:`` frame until the stream ends.

    * the ``data:`` prefix is stripped, with or without a following space;
    * blank lines, comments (``:``), ``event:``/``id:`` lines and lines that are not JSON are skipped;
    * ``[DONE]`` ends the stream, and so does a frame whose ``data`` is ``true`` (chat streams);
    * a frame with a non-zero ``code`` raises :class:`CairnError` with that code and message.
    """
    for raw in lines:
        if raw is None:
            continue
        line = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        line = line.strip("\r\n")
        if not line.strip():
            continue
        if line.startswith("data:"):
            line = line[5:]
            if line.startswith(" "):
                line = line[1:]
        elif line.startswith((":", "event:", "id:", "retry:")):
            continue
        line = line.strip()
        if line == "[DONE]":
            return
        try:
            frame = json.loads(line)
        except ValueError:
            continue
        if not isinstance(frame, dict):
            continue
        code = frame.get("code")
        if isinstance(code, int) and code != 0:
            raise CairnError(str(frame.get("message") or "Error"), code=code, data=frame.get("data"))
        if frame.get("data") is True:
            return
        yield frame
