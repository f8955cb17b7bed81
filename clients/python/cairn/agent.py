"""Agent: a workflow defined by a canvas DSL, and its sessions."""

from __future__ import annotations

from typing import Any

from .base import Base, items_of
from .session import Session


class Agent(Base):
    """An agent (spec "Agent" fields: id, title, description, dsl; every key of the response is kept)."""

    _defaults = {"id": None, "title": None, "avatar": None, "canvas_type": None, "description": None, "dsl": None}

    def create_session(self, **kwargs: Any) -> Session:
        """A new session; keyword arguments are the begin component's parameters (and ``release``)."""
        data = self.rag._call("POST", f"/agents/{self.id}/sessions", json=kwargs).get("data") or {}
        data.setdefault("agent_id", self.id)
        return Session(self.rag, data)

    def list_sessions(self, page: int = 1, page_size: int = 30, orderby: str = "update_time", desc: bool = True,
                      id: str | None = None) -> list[Session]:
        params = {"page": page, "page_size": page_size, "orderby": orderby, "desc": desc, "id": id}
        data = self.rag._call("GET", f"/agents/{self.id}/sessions", params=params).get("data")
        return [Session(self.rag, {"agent_id": self.id, **s}) for s in items_of(data, "sessions")]

    def delete_sessions(self, ids: list[str] | None = None, delete_all: bool = False) -> None:
        self.rag._call("DELETE", f"/agents/{self.id}/sessions", json={"ids": ids, "delete_all": delete_all})
