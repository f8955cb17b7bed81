"""Small helpers shared by the tests."""

from __future__ import annotations

import socket
import uuid


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique(prefix: str) -> str:
    """A name no other test uses: ``<prefix>-<10 hex>``."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_for_run(kb, doc_id: str, states=("DONE", "FAIL", "CANCEL"), timeout: float = 180):
    """Polls the document until its `run` is one of ``states``; returns the Document."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        [doc] = kb.list_documents(id=doc_id)
        if doc.run in states:
            return doc
        if time.monotonic() > deadline:
            raise AssertionError(f"document {doc_id} still {doc.run} after {timeout} s ({doc.progress_msg})")
        time.sleep(0.5)


def long_text(paragraphs: int = 3000) -> bytes:
    """A text file big enough that parsing it takes a while (for stop/cancel tests)."""
    words = ["granite", "harbour", "lantern", "tide", "compass", "ledger", "meadow", "quarry", "ember", "willow"]
    lines = []
    for i in range(paragraphs):
        lines.append(f"Paragraph {i}: " + " ".join(words[(i + j) % len(words)] for j in range(40)) + ".")
    return ("\n\n".join(lines) + "\n").encode()
