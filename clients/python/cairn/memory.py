"""Memory: stored conversation messages produced by agents."""

from __future__ import annotations

from typing import Any

from .base import Base
from .errors import CairnError


class Memory(Base):
    """A memory (spec "Memory" fields as attributes)."""

    _defaults = {"id": None, "name": None}

    def update(self, update_dict: dict) -> "Memory":
        """Changes name, avatar, permission, llm_id, description, memory_size, forgetting_policy,
        temperature, system_prompt or user_prompt; returns the updated Memory."""
        if not isinstance(update_dict, dict):
            raise CairnError("`update_dict` must be a dict", code=400)
        data = self.rag._call("PUT", f"/memories/{self.id}", json=update_dict).get("data")
        if isinstance(data, dict):
            self._update_from_dict(self.rag, data)
        return self

    def get_config(self) -> "Memory":
        return Memory(self.rag, self.rag._call("GET", f"/memories/{self.id}/config").get("data") or {})

    def list_memory_messages(self, agent_id: str | list[str] | None = None, keywords: str | None = None,
                             page: int = 1, page_size: int = 50) -> Any:
        params = {"agent_id": agent_id, "keywords": keywords, "page": page, "page_size": page_size}
        return self.rag._call("GET", f"/memories/{self.id}", params=params).get("data")

    def forget_message(self, message_id: int) -> bool:
        self.rag._call("DELETE", f"/messages/{self.id}:{message_id}")
        return True

    def update_message_status(self, message_id: int, status: bool) -> bool:
        if not isinstance(status, bool):
            raise CairnError("status must be a boolean", code=400)
        self.rag._call("PUT", f"/messages/{self.id}:{message_id}", json={"status": status})
        return True

    def get_message_content(self, message_id: int) -> Any:
        return self.rag._call("GET", f"/messages/{self.id}:{message_id}/content").get("data")
