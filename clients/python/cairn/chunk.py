"""Chunk: a piece of a document, as stored and as returned by retrieval."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Base, plain
from .errors import CairnError, ChunkUpdateError

if TYPE_CHECKING:
    from .client import Client


class Chunk(Base):
    """A chunk (spec "Chunk" fields as attributes; retrieval adds similarity scores)."""

    _defaults = {
        "id": "",
        "content": "",
        "important_keywords": [],
        "tag_kwd": [],
        "questions": [],
        "image_id": "",
        "create_time": "",
        "create_timestamp": 0.0,
        "dataset_id": None,
        "document_name": "",
        "document_id": "",
        "available": True,
    }

    def __init__(self, rag: "Client", res_dict: dict[str, Any] | None = None):
        super().__init__(rag, res_dict)
        if not self.document_name:
            for key in ("document_keyword", "docnm_kwd"):
                if self.__dict__.get(key):
                    self.document_name = self.__dict__[key]
                    break

    def update(self, update_message: dict) -> "Chunk":
        """Changes content, important_keywords, questions, tag_kwd, positions, available or image_base64.

        Any failure raises :class:`ChunkUpdateError` (code 1001 for an invalid chunk id, 1002 when the
        update failed, or the service's code).
        """
        if not isinstance(update_message, dict):
            raise ChunkUpdateError(400, "`update_message` must be a dict")
        path = f"/datasets/{self.dataset_id}/documents/{self.document_id}/chunks/{self.id}"
        try:
            res = self.rag._call("PATCH", path, json={k: plain(v) for k, v in update_message.items()})
        except ChunkUpdateError:
            raise
        except CairnError as e:
            raise ChunkUpdateError(e.code, e.message, e.data, e.status) from None
        data = res.get("data")
        if isinstance(data, dict):
            self._update_from_dict(self.rag, data.get("chunk", data) if isinstance(data.get("chunk"), dict) else data)
        else:
            self._update_from_dict(self.rag, {k: v for k, v in update_message.items() if k != "image_base64"})
        return self
