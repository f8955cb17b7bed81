"""Document: a file in a dataset, and the chunk operations scoped to it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .base import Base, error_from, items_of, plain
from .chunk import Chunk
from .errors import CairnError

if TYPE_CHECKING:
    from .client import Client


class Document(Base):
    """A document (spec "Document" fields as attributes, with the spec's defaults)."""

    _defaults = {
        "id": "",
        "name": "",
        "thumbnail": None,
        "dataset_id": None,
        "chunk_method": "naive",
        "parser_config": None,
        "source_type": "local",
        "type": "",
        "created_by": "",
        "size": 0,
        "token_count": 0,
        "chunk_count": 0,
        "progress": 0.0,
        "progress_msg": "",
        "process_begin_at": None,
        "process_duration": 0.0,
        "run": "UNSTART",
        "status": None,
        "meta_fields": {},
    }

    def update(self, update_message: dict) -> "Document":
        """Changes display_name (sent as ``name``), meta_fields, chunk_method or parser_config."""
        if not isinstance(update_message, dict):
            raise CairnError("`update_message` must be a dict", code=400)
        if "meta_fields" in update_message and not isinstance(update_message["meta_fields"], dict):
            raise CairnError("meta_fields must be a dictionary", code=400)
        body = {k: plain(v) for k, v in update_message.items()}
        if "display_name" in body and "name" not in body:
            body["name"] = body.pop("display_name")
        res = self.rag._call("PATCH", f"/datasets/{self.dataset_id}/documents/{self.id}", json=body)
        if isinstance(res.get("data"), dict):
            self.__init__(self.rag, res["data"])
        return self

    def download(self) -> bytes:
        """The original file's bytes."""
        res = self.rag.get(f"/datasets/{self.dataset_id}/documents/{self.id}")
        if res.status_code >= 400 or "json" in res.headers.get("Content-Type", ""):
            try:
                body = json.loads(res.content)
            except ValueError:
                body = None
            if isinstance(body, dict) and "code" in body and "message" in body and body["code"] != 0 \
                    and set(body) <= {"code", "message", "data"}:
                raise error_from(body, res.status_code)
            if res.status_code >= 400:
                raise CairnError(f"HTTP {res.status_code}: {res.text[:300]}", code=res.status_code, status=res.status_code)
        return res.content

    # ------------------------------------------------------------------ chunks
    def list_chunks(self, page: int = 1, page_size: int = 30, keywords: str = "", id: str = "") -> list[Chunk]:
        params = {"page": page, "page_size": page_size, "keywords": keywords or None, "id": id or None}
        data = self.rag._call("GET", self._chunks_path(), params=params).get("data") or {}
        if isinstance(data, dict) and isinstance(data.get("chunk"), dict):
            found = [data["chunk"]]
        else:
            found = items_of(data, "chunks")
        return [self._chunk(c) for c in found]

    def add_chunk(self, content: str, important_keywords: list[str] | None = None, questions: list[str] | None = None,
                  image_base64: str | None = None, *, tag_kwd: list[str] | None = None) -> Chunk:
        body: dict[str, Any] = {
            "content": content,
            "important_keywords": list(important_keywords or []),
            "tag_kwd": list(tag_kwd or []),
            "questions": list(questions or []),
        }
        if image_base64 is not None:
            body["image_base64"] = image_base64
        data = self.rag._call("POST", self._chunks_path(), json=body).get("data") or {}
        return self._chunk(data.get("chunk", data) if isinstance(data, dict) else {})

    def delete_chunks(self, ids: list[str] | None = None, delete_all: bool = False) -> None:
        """Like ragflow-sdk: raises only when nothing is deleted (code != 0); a partial delete (some ids unknown or duplicated, listed in the answer's data.errors) returns None."""
        self.rag._call("DELETE", self._chunks_path(), json={"chunk_ids": ids, "delete_all": delete_all})

    def _chunks_path(self) -> str:
        return f"/datasets/{self.dataset_id}/documents/{self.id}/chunks"

    def _chunk(self, data: dict[str, Any]) -> Chunk:
        data = dict(data)
        data.setdefault("dataset_id", self.dataset_id)
        data.setdefault("document_id", self.id)
        data.setdefault("document_name", self.name)
        return Chunk(self.rag, data)
