"""Memory: conversation messages kept for agents (spec "Memory", "Memory message", Memories operations).

A memory stores every conversation turn as a ``raw`` message and the ``semantic`` / ``episodic`` /
``procedural`` items its chat model extracts from it. Messages are plain dicts (spec "message dict"):
``message_id`` (int), ``message_type``, ``source_id``, ``memory_id``, ``user_id``, ``agent_id``,
``session_id``, ``valid_at``, ``invalid_at``, ``forget_at`` (Unix seconds or None), ``status``; search
and recent results add ``content`` (search also ``similarity``, ``term_similarity``,
``vector_similarity``); :meth:`Memory.get_message_content` adds ``content`` and ``content_embed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Base
from .errors import CairnError

if TYPE_CHECKING:
    from .client import Client

__all__ = ["Memory", "MessagesAdded"]

DEFAULT_MEMORY_SIZE = 5 * 1024 * 1024


class Memory(Base):
    """A memory (spec "Memory" fields as attributes; ``permissions`` repeats ``permission``, as RAGFlow names it)."""

    _defaults = {
        "id": "",
        "name": "",
        "avatar": None,
        "tenant_id": "",
        "owner_name": "",
        "memory_type": ["raw"],
        "storage_type": "table",
        "embd_id": "",
        "llm_id": "",
        "permission": "me",
        "permissions": "me",
        "description": None,
        "memory_size": DEFAULT_MEMORY_SIZE,
        "forgetting_policy": "FIFO",
        "temperature": 0.5,
        "system_prompt": "",
        "user_prompt": "",
    }

    # ------------------------------------------------------------------ the memory itself
    def update(self, update_dict: dict) -> "Memory":
        """Changes the given keys (name, avatar, permission, llm_id, embd_id while empty, memory_type,
        description, memory_size, forgetting_policy, temperature, system_prompt, user_prompt); the
        attributes are refreshed from the answer and the Memory is returned."""
        if not isinstance(update_dict, dict):
            raise CairnError("`update_dict` must be a dict", code=400)
        data = self.rag._call("PUT", f"/memories/{self.id}", json=update_dict).get("data")
        if isinstance(data, dict):
            self._update_from_dict(self.rag, data)
        return self

    def get_config(self) -> "Memory":
        """The memory's current configuration, as a new Memory."""
        return Memory(self.rag, self.rag._call("GET", f"/memories/{self.id}/config").get("data") or {})

    # ------------------------------------------------------------------ its messages
    def list_memory_messages(self, agent_id: str | list[str] | None = None, keywords: str | None = None,
                             page: int = 1, page_size: int = 50) -> dict[str, Any]:
        """``{"messages": {"message_list": [...], "total_count": N}, "storage_type": "table"}``: top-level
        messages newest first, each raw message with its ``task`` (``progress``, ``progress_msg``) and the
        items extracted from it under ``extract``. ``agent_id`` filters by source agent(s); ``keywords``
        is a substring of the session id."""
        params = {"agent_id": agent_id, "keywords": keywords, "page": page, "page_size": page_size}
        data = self.rag._call("GET", f"/memories/{self.id}", params=params).get("data") or {}
        return data

    def forget_message(self, message_id: int) -> bool:
        """Forgets a message: it stays readable and listed, is never retrieved, and goes first when FIFO
        needs room."""
        self.rag._call("DELETE", f"/messages/{self.id}:{_message_id(message_id)}")
        return True

    def update_message_status(self, message_id: int, status: bool) -> bool:
        """Enables (True) or disables (False) a message; disabled messages are not searched."""
        if not isinstance(status, bool):
            raise CairnError("`status` must be a boolean", code=400)
        self.rag._call("PUT", f"/messages/{self.id}:{_message_id(message_id)}", json={"status": status})
        return True

    def correct_message(self, message_id: int, content: str) -> dict[str, Any]:
        """Corrects an extracted item: a new item with ``content`` replaces it (returned, with ``replaces``); the old
        one stays readable with ``invalid_at`` and ``replaced_by`` set. Raw messages and items no longer current
        cannot be corrected (400)."""
        return self.rag._call("POST", f"/messages/{self.id}:{_message_id(message_id)}/correct", json={"content": content}).get("data") or {}

    def retract_message(self, message_id: int) -> dict[str, Any]:
        """Retracts an extracted item: no longer current (``invalid_at`` now), nothing replaces it, never deleted.
        Returns the item as it is now."""
        return self.rag._call("POST", f"/messages/{self.id}:{_message_id(message_id)}/retract", json={}).get("data") or {}

    def get_message_content(self, message_id: int) -> dict[str, Any]:
        """The message dict with its full ``content`` and embedding vector ``content_embed``."""
        return self.rag._call("GET", f"/messages/{self.id}:{_message_id(message_id)}/content").get("data") or {}


class MessagesAdded(str):
    """What :meth:`Client.add_message` returns: the service's confirmation text (``"All add to task."``,
    RAGFlow's return value) that also carries the per-memory results in ``results``
    (``[{"memory_id", "message_id", "task_error"?}]``) and ``message_ids`` (``{memory_id: message_id}``)."""

    results: list[dict[str, Any]]

    def __new__(cls, text: str, results: Any = None) -> "MessagesAdded":
        self = super().__new__(cls, text)
        self.results = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
        return self

    @property
    def message_ids(self) -> dict[str, int]:
        return {r["memory_id"]: r["message_id"] for r in self.results if r.get("message_id") is not None}


def _message_id(message_id: Any) -> int:
    """Message ids are integers (an int-like string is accepted)."""
    if isinstance(message_id, bool):
        raise CairnError("`message_id` must be an integer", code=400)
    if isinstance(message_id, int):
        return message_id
    if isinstance(message_id, str) and message_id.strip().isdigit():
        return int(message_id)
    raise CairnError(f"`message_id` must be an integer, got {message_id!r}", code=400)


def memory_ids(memory_id: Any) -> list[str]:
    """``memory_id`` as the list the routes take (a single id is accepted too)."""
    if isinstance(memory_id, str):
        return [memory_id]
    if isinstance(memory_id, (list, tuple)) and all(isinstance(m, str) for m in memory_id):
        return list(memory_id)
    raise CairnError("`memory_id` must be a list of memory ids", code=400)
