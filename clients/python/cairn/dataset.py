"""DataSet: a collection of documents, and the document operations scoped to it."""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any

from .base import Base, check, error_from, items_of, plain
from .document import Document
from .errors import CairnError

if TYPE_CHECKING:
    from .client import Client

TERMINAL_RUN_STATES = ("DONE", "FAIL", "CANCEL")


class DataSet(Base):
    """A dataset (spec "DataSet" fields as attributes)."""

    class ParserConfig(Base):
        """``parser_config`` as an object; RAGFlow code builds one with ``DataSet.ParserConfig(rag, {...})``."""

    _defaults = {"id": "", "name": ""}

    def __init__(self, rag: "Client", res_dict: dict[str, Any] | None = None):
        super().__init__(rag, res_dict)
        config = self.__dict__.get("parser_config")
        if isinstance(config, Base) and not isinstance(config, DataSet.ParserConfig):
            self.parser_config = DataSet.ParserConfig(rag, config.to_json())

    # ------------------------------------------------------------------ the dataset itself
    def update(self, update_message: dict) -> "DataSet":
        """Changes the given keys (name, avatar, embedding_model, permission, pagerank, chunk_method, ...)."""
        if not isinstance(update_message, dict):
            raise CairnError("`update_message` must be a dict", code=400)
        res = self.rag._call("PUT", f"/datasets/{self.id}", json={k: plain(v) for k, v in update_message.items()})
        if isinstance(res.get("data"), dict):
            self.__init__(self.rag, res["data"])
        return self

    # ------------------------------------------------------------------ documents
    def upload_documents(self, document_list: list[dict]) -> list[Document]:
        """Uploads files given as ``{"display_name": str, "blob": bytes}``; returns the stored Documents.

        A batch succeeds in part: files that failed are left out of the result (and reported with a
        warning); only when every file failed does the call raise.
        """
        files = []
        for item in document_list:
            blob = item.get("blob")
            if blob is None:
                blob = b""
            elif isinstance(blob, str):
                blob = blob.encode("utf-8")
            files.append(("file", (item.get("display_name") or "", blob)))
        res = self.rag.post(f"/datasets/{self.id}/documents", files=files)
        try:
            body = res.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            check(res)  # raises for a non-JSON reply
            body = {}
        docs = items_of(body.get("data"), "docs")
        if body.get("code") != 0 and not docs:
            raise error_from(body, res.status_code)
        if body.get("code") != 0 or body.get("errors"):
            detail = body.get("errors") or body.get("message")
            warnings.warn(f"some documents were not uploaded: {detail}", stacklevel=2)
        return [Document(self.rag, d) for d in docs]

    def list_documents(self, id: str | None = None, ids: list[str] | None = None, name: str | None = None,
                       keywords: str | None = None, page: int = 1, page_size: int = 30, orderby: str = "create_time",
                       desc: bool = True, create_time_from: int = 0, create_time_to: int = 0,
                       order_by: str | None = None) -> list[Document]:
        """Documents of the dataset. ``order_by`` (the spec's spelling) is an alias of ``orderby``."""
        params = {
            "id": id, "ids": ids, "name": name, "keywords": keywords, "page": page, "page_size": page_size,
            "orderby": order_by or orderby, "desc": desc,
            "create_time_from": create_time_from, "create_time_to": create_time_to,
        }
        data = self.rag._call("GET", f"/datasets/{self.id}/documents", params=params).get("data") or {}
        return [Document(self.rag, d) for d in items_of(data, "docs")]

    def delete_documents(self, ids: list[str] | None = None, delete_all: bool = False) -> None:
        """Like ragflow-sdk: raises only when nothing is deleted (code != 0); a partial delete (some ids unknown or duplicated, listed in the answer's data.errors) returns None."""
        self.rag._call("DELETE", f"/datasets/{self.id}/documents", json={"ids": ids, "delete_all": delete_all})

    # ------------------------------------------------------------------ parsing
    def async_parse_documents(self, document_ids: list[str]) -> None:
        """Starts parsing; it runs in the background."""
        self.rag._call("POST", f"/datasets/{self.id}/chunks", json={"document_ids": document_ids})

    def async_cancel_parse_documents(self, document_ids: list[str]) -> None:
        """Stops parsing of the given documents."""
        self.rag._call("DELETE", f"/datasets/{self.id}/chunks", json={"document_ids": document_ids})

    def parse_documents(self, document_ids: list[str], *, poll_interval: float = 1.0,
                        timeout: float | None = None) -> list[tuple[str, str, int, int]]:
        """Parses the documents and waits until each one's ``run`` is DONE, FAIL or CANCEL.

        Returns ``[(document_id, run, chunk_count, token_count)]`` in the order given. On
        KeyboardInterrupt the documents still parsing are cancelled and the interrupt re-raised.
        ``timeout`` (seconds, default none) raises TimeoutError when parsing takes longer.
        """
        self.async_parse_documents(document_ids)
        final: dict[str, Document] = {}
        pending = list(dict.fromkeys(document_ids))
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                for doc_id in list(pending):
                    found = self.list_documents(id=doc_id)
                    if not found:
                        raise CairnError(f"Document {doc_id} not found", code=404)
                    if found[0].run in TERMINAL_RUN_STATES:
                        final[doc_id] = found[0]
                        pending.remove(doc_id)
                if not pending:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"documents still parsing after {timeout} s: {', '.join(pending)}")
                time.sleep(poll_interval)
        except KeyboardInterrupt:
            if pending:
                try:
                    self.async_cancel_parse_documents(pending)
                except CairnError:
                    pass
            raise
        return [(i, final[i].run, final[i].chunk_count, final[i].token_count) for i in dict.fromkeys(document_ids)]

    # ------------------------------------------------------------------ ingestion logs (RAGFlow)
    def list_ingestion_logs(self, document_id: str | None = None, page: int = 1, page_size: int = 30) -> dict:
        """``{"total": N, "logs": [...]}``: one log per document run (pipeline or chunk method), newest
        first, plain dicts: ``id, document_id, document_name, run_seq, pipeline_id, operation_status`` and
        ``steps`` ``[{component_id, component_name, status, duration, output, error}]`` (``output``: counts
        such as pages, sections, chunks, tokens, model and cached calls). ``document_id``: that document's only."""
        params = {"document_id": document_id, "page": page, "page_size": page_size}
        data = self.rag._call("GET", f"/datasets/{self.id}/ingestions", params=params).get("data") or {}
        logs = items_of(data, "logs")
        total = data.get("total", len(logs)) if isinstance(data, dict) else len(logs)
        return {"total": total, "logs": logs}

    def get_ingestion_summary(self) -> dict:
        """``{"doc_num", "chunk_num", "token_num", "status": {"UNSTART", "RUNNING", "CANCEL", "DONE", "FAIL"}}``:
        the dataset's documents, chunks and tokens, and its documents by run state."""
        return self.rag._call("GET", f"/datasets/{self.id}/ingestions/summary").get("data") or {}

    # ------------------------------------------------------------------ automatic metadata (RAGFlow)
    def get_auto_metadata(self) -> Any:
        return self.rag._call("GET", f"/datasets/{self.id}/metadata/config").get("data")

    def update_auto_metadata(self, **config: Any) -> Any:
        return self.rag._call("PUT", f"/datasets/{self.id}/metadata/config", json=config).get("data")

    # ------------------------------------------------------------------ embedding check (RAGFlow)
    def check_embedding(self, embd_id: str, check_num: int = 5) -> dict:
        """Re-embeds up to ``check_num`` of the dataset's chunks with ``embd_id`` and compares them with the
        stored vectors: ``{"summary": {avg_cos_sim, min_cos_sim, max_cos_sim, sampled, valid, ...},
        "results": [...]}``. Raises CairnError (400) when the model is not compatible (average cosine
        below 0.9), its ``data`` holding the same figures."""
        return self.rag._call("POST", f"/datasets/{self.id}/embedding/check", json={"embd_id": embd_id, "check_num": check_num}).get("data")
