"""Chat: a chat assistant, and its sessions."""

from __future__ import annotations

from .base import Base, items_of, plain
from .errors import CairnError
from .session import Session


class Chat(Base):
    """A chat assistant (spec "Chat" fields as attributes; every key of the response is kept)."""

    _defaults = {"id": "", "name": "assistant"}

    def update(self, update_message: dict) -> "Chat":
        """Partial update: only the given keys change (PATCH /chats/{id})."""
        if not isinstance(update_message, dict):
            raise CairnError("`update_message` must be a dict", code=400)
        res = self.rag._call("PATCH", f"/chats/{self.id}", json={k: plain(v) for k, v in update_message.items()})
        data = res.get("data")
        if isinstance(data, dict):
            self._update_from_dict(self.rag, data)
        return self

    def create_session(self, name: str = "New session") -> Session:
        data = self.rag._call("POST", f"/chats/{self.id}/sessions", json={"name": name}).get("data") or {}
        data.setdefault("chat_id", self.id)
        return Session(self.rag, data)

    def list_sessions(self, page: int = 1, page_size: int = 30, orderby: str = "create_time", desc: bool = True,
                      id: str | None = None, name: str | None = None, user_id: str | None = None) -> list[Session]:
        params = {
            "page": page, "page_size": page_size, "orderby": orderby, "desc": desc,
            "id": id, "name": name, "user_id": user_id,
        }
        data = self.rag._call("GET", f"/chats/{self.id}/sessions", params=params).get("data")
        return [Session(self.rag, {"chat_id": self.id, **s}) for s in items_of(data, "sessions")]

    def delete_sessions(self, ids: list[str] | None = None, delete_all: bool = False) -> None:
        """Like ragflow-sdk: raises only when nothing is deleted (code != 0); a partial delete (some ids unknown or duplicated, listed in the answer's data.errors) returns None."""
        self.rag._call("DELETE", f"/chats/{self.id}/sessions", json={"ids": ids, "delete_all": delete_all})


__all__ = ["Chat"]
