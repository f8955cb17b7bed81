"""Agent: a workflow defined by a canvas DSL, and its sessions."""

from __future__ import annotations

from typing import Any

from .base import Base, items_of, plain
from .session import Session


class Agent(Base):
    """An agent (spec "Agent" fields: id, title, description, dsl; every key of the response is kept,
    e.g. ``permission``, ``canvas_category``, ``release``, ``create_time``, ``update_time``)."""

    _defaults = {"id": None, "title": None, "avatar": None, "canvas_type": None, "description": None, "dsl": None}

    def create_session(self, **kwargs: Any) -> Session:
        """A new session (``POST /agents/{id}/sessions``). Keyword arguments: values of the Begin
        component's input fields, and ``name``, ``user_id``, ``release`` (true: the latest published
        version; 400 "No available published version" when there is none). The session's ``message``
        holds the prologue."""
        body = {k: plain(v) for k, v in kwargs.items()}
        data = self.rag._call("POST", f"/agents/{self.id}/sessions", json=body).get("data") or {}
        data.setdefault("agent_id", self.id)
        return Session(self.rag, data)

    def get_session(self, session_id: str) -> Session:
        """One session of this agent, with its messages (404 when it is not one)."""
        data = self.rag._call("GET", f"/agents/{self.id}/sessions/{session_id}").get("data") or {}
        data.setdefault("agent_id", self.id)
        return Session(self.rag, data)

    def list_sessions(self, page: int = 1, page_size: int = 30, orderby: str = "update_time", desc: bool = True,
                      id: str | None = None, user_id: str | None = None, dsl: bool | None = None) -> list[Session]:
        """Sessions of this agent, most recently updated first by default; ``dsl=False`` leaves each
        session's canvas snapshot out."""
        params = {"page": page, "page_size": page_size, "orderby": orderby, "desc": desc, "id": id,
                  "user_id": user_id, "dsl": dsl}
        data = self.rag._call("GET", f"/agents/{self.id}/sessions", params=params).get("data")
        return [Session(self.rag, {"agent_id": self.id, **s}) for s in items_of(data, "sessions")]

    def logs(self, message_id: str) -> Any:
        """RAGFlow's log of one turn (``GET /agents/{id}/logs/{message_id}``): ``[{component_id, trace:
        [{path, tool_name, arguments, result, elapsed_time}]}]`` for each component that called tools,
        ``{}`` when the turn made no tool call."""
        return self.rag._call("GET", f"/agents/{self.id}/logs/{message_id}").get("data")

    def delete_sessions(self, ids: list[str] | None = None, delete_all: bool = False) -> None:
        """Like ragflow-sdk: raises only when nothing is deleted (code != 0); a partial delete (some ids unknown or duplicated, listed in the answer's data.errors) returns None."""
        self.rag._call("DELETE", f"/agents/{self.id}/sessions", json={"ids": ids, "delete_all": delete_all})


__all__ = ["Agent"]
