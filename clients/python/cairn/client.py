"""The top-level client: HTTP transport and the operations that are not on a resource object."""

from __future__ import annotations

from typing import Any

import requests

from .agent import Agent
from .base import check, drop_none, items_of, plain, query
from .chat import Chat
from .chunk import Chunk
from .dataset import DataSet
from .errors import CairnError
from .memory import Memory, MessagesAdded, memory_ids

__all__ = ["Client", "RAGFlow"]


class Client:
    """Client of a Cairn service (RAGFlow-compatible).

    ``Client(api_key, base_url="http://127.0.0.1:9380", version="v1")``; every call goes to
    ``{base_url}/api/{version}`` with ``Authorization: Bearer <api_key>``. Every failure raises
    :class:`~cairn.CairnError` with the envelope's ``code`` and ``message``.

    ``timeout`` (seconds, default none) applies to every request; for streamed answers only to connecting.
    """

    def __init__(self, api_key: str, base_url: str = "http://127.0.0.1:9380", version: str = "v1", timeout: float | None = None):
        base_url = base_url.strip().rstrip("/")
        if "://" not in base_url:
            base_url = "http://" + base_url
        self.user_key = api_key
        self.base_url = base_url
        self.api_url = f"{base_url}/api/{version}"
        self.authorization_header = {"Authorization": f"Bearer {api_key}"}
        self.timeout = timeout
        self._http = requests.Session()

    # ------------------------------------------------------------------ transport (RAGFlow names)
    def post(self, path: str, json: Any = None, stream: bool = False, files: Any = None, data: Any = None) -> requests.Response:
        return self._send("POST", path, json=json, stream=stream, files=files, data=data)

    def get(self, path: str, params: dict[str, Any] | None = None, json: Any = None, stream: bool = False) -> requests.Response:
        return self._send("GET", path, params=params, json=json, stream=stream)

    def delete(self, path: str, json: Any = None) -> requests.Response:
        return self._send("DELETE", path, json=json)

    def put(self, path: str, json: Any = None) -> requests.Response:
        return self._send("PUT", path, json=json)

    def patch(self, path: str, json: Any = None) -> requests.Response:
        return self._send("PATCH", path, json=json)

    def _send(self, method: str, path: str, *, params: dict[str, Any] | None = None, json: Any = None,
              stream: bool = False, files: Any = None, data: Any = None) -> requests.Response:
        return self._http.request(
            method,
            self.api_url + path,
            params=query(params),
            json=json,
            files=files,
            data=data,
            headers=self.authorization_header,
            stream=stream,
            # A streamed answer may pause between messages: only connecting is timed then.
            timeout=(self.timeout, None) if stream and self.timeout else self.timeout,
        )

    # ------------------------------------------------------------------ envelope
    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """Sends a request and returns the success envelope; raises CairnError otherwise."""
        return check(self._send(method, path, **kwargs))

    # ------------------------------------------------------------------ datasets
    def create_dataset(self, name: str, avatar: str | None = None, description: str | None = None,
                       embedding_model: str | None = None, permission: str = "me", chunk_method: str = "naive",
                       parser_config: Any = None, auto_metadata_config: dict | None = None,
                       parse_type: int | None = None, pipeline_id: str | None = None) -> "DataSet":
        """Creates a dataset. It ingests through a chunk method (``chunk_method``, ``parser_config``), or
        through an ingestion pipeline: ``pipeline_id`` (a canvas created with ``create_agent(...,
        canvas_category="dataflow_canvas")``) with ``parse_type`` (an int 0..64, kept as given), both
        required together. With a pipeline the default ``chunk_method`` ("naive") is not sent; naming
        another chunk method or a ``parser_config`` with it is the service's 400."""
        pipeline = pipeline_id is not None or parse_type is not None
        body = drop_none({
            "name": name,
            "avatar": avatar,
            "description": description,
            "embedding_model": embedding_model,
            "permission": permission,
            "chunk_method": None if pipeline and chunk_method == "naive" else chunk_method,
            "parser_config": plain(parser_config),
            "auto_metadata_config": auto_metadata_config,
            "parse_type": parse_type,
            "pipeline_id": pipeline_id,
        })
        return DataSet(self, self._call("POST", "/datasets", json=body)["data"])

    def delete_datasets(self, ids: list[str] | None = None, delete_all: bool = False) -> None:
        self._call("DELETE", "/datasets", json={"ids": ids, "delete_all": delete_all})

    def list_datasets(self, page: int = 1, page_size: int = 30, orderby: str = "create_time", desc: bool = True,
                      id: str | None = None, ids: list[str] | None = None, name: str | None = None,
                      include_parsing_status: bool = False, keywords: str | None = None) -> list["DataSet"]:
        params = {
            "page": page, "page_size": page_size, "orderby": orderby, "desc": desc,
            "id": id, "ids": ids, "name": name, "keywords": keywords,
            "include_parsing_status": include_parsing_status or None,
        }
        data = self._call("GET", "/datasets", params=params).get("data") or []
        return [DataSet(self, d) for d in items_of(data, "datasets")]

    def get_dataset(self, name: str) -> "DataSet":
        found = self.list_datasets(name=name)
        if found:
            return found[0]
        raise CairnError(f"Dataset {name} not found", code=404)

    # ------------------------------------------------------------------ retrieval
    def retrieve(self, dataset_ids: list[str], document_ids: list[str] | None = None, question: str = "",
                 page: int = 1, page_size: int = 30, similarity_threshold: float = 0.2,
                 vector_similarity_weight: float = 0.3, top_k: int = 1024, rerank_id: str | None = None,
                 keyword: bool = False, cross_languages: list[str] | None = None,
                 metadata_condition: dict | None = None, use_kg: bool = False, toc_enhance: bool = False) -> list["Chunk"]:
        body = drop_none({
            "dataset_ids": dataset_ids,
            "document_ids": document_ids,
            "question": question,
            "page": page,
            "page_size": page_size,
            "similarity_threshold": similarity_threshold,
            "vector_similarity_weight": vector_similarity_weight,
            "top_k": top_k,
            "rerank_id": rerank_id,
            "keyword": keyword,
            "cross_languages": cross_languages,
            "metadata_condition": metadata_condition,
            # RAGFlow-only switches: sent only when asked for.
            "use_kg": use_kg or None,
            "toc_enhance": toc_enhance or None,
        })
        data = self._call("POST", "/retrieval", json=body).get("data") or {}
        return [Chunk(self, c) for c in items_of(data, "chunks")]

    # ------------------------------------------------------------------ chat assistants
    def create_chat(self, name: str, icon: str = "", dataset_ids: list[str] | None = None, llm_id: str | None = None,
                    llm_setting: dict | None = None, prompt_config: dict | None = None, **kwargs: Any) -> "Chat":
        body: dict[str, Any] = {"name": name, "icon": icon, "dataset_ids": list(dataset_ids or [])}
        body.update(drop_none({"llm_id": llm_id, "llm_setting": plain(llm_setting), "prompt_config": plain(prompt_config)}))
        body.update({k: plain(v) for k, v in kwargs.items()})
        return Chat(self, self._call("POST", "/chats", json=body)["data"])

    def get_chat(self, chat_id: str) -> "Chat":
        return Chat(self, self._call("GET", f"/chats/{chat_id}")["data"])

    def delete_chats(self, ids: list[str] | None = None, delete_all: bool = False) -> None:
        """Like ragflow-sdk: raises only when nothing is deleted (code != 0); a partial delete (some ids unknown or duplicated, listed in the answer's data.errors) returns None."""
        self._call("DELETE", "/chats", json={"ids": ids, "delete_all": delete_all})

    def list_chats(self, page: int = 1, page_size: int = 30, orderby: str = "create_time", desc: bool = True,
                   id: str | None = None, name: str | None = None, keywords: str | None = None,
                   owner_ids: str | list[str] | None = None, parser_id: str | None = None) -> list["Chat"]:
        params = {
            "page": page, "page_size": page_size, "orderby": orderby, "desc": desc,
            "id": id, "name": name, "keywords": keywords, "owner_ids": owner_ids, "parser_id": parser_id,
        }
        data = self._call("GET", "/chats", params=params).get("data") or []
        return [Chat(self, c) for c in items_of(data, "chats")]

    # ------------------------------------------------------------------ agents
    def list_agents(self, page: int = 1, page_size: int = 30, orderby: str = "update_time", desc: bool = True,
                    id: str | None = None, title: str | None = None, keywords: str | None = None,
                    canvas_category: str | list[str] | None = None) -> list["Agent"]:
        """Agents the caller may use (always a list): ``id``/``title`` filter exactly, ``keywords`` is a
        case-insensitive search in titles; ``orderby`` update_time (default), create_time or title.
        ``canvas_category`` "agent_canvas" lists agents only, "dataflow_canvas" ingestion pipelines only
        (a list of both, or none: both)."""
        if isinstance(canvas_category, (list, tuple)):
            canvas_category = ",".join(canvas_category)
        params = {"page": page, "page_size": page_size, "orderby": orderby, "desc": desc,
                  "id": id, "title": title, "keywords": keywords, "canvas_category": canvas_category}
        data = self._call("GET", "/agents", params=params).get("data") or []
        return [Agent(self, a) for a in items_of(data, "canvas", "agents")]

    def get_agent(self, agent_id: str) -> "Agent":
        return Agent(self, self._call("GET", f"/agents/{agent_id}")["data"])

    def create_agent(self, title: str, dsl: dict | None = None, description: str | None = None, canvas_type: str | None = None,
                     release: bool | None = None, template_id: str | None = None,
                     dataset_ids: list[str] | None = None, canvas_category: str | None = None) -> "Agent":
        """Creates an agent from a canvas DSL, or from a template (``template_id``, one of ``GET
        /agents/templates``; ``dataset_ids`` go to its Retrieval components); ``release=True`` also publishes
        it. RAGFlow's SDK returns nothing here; the new :class:`Agent` is returned (code that ignores the
        result is unaffected). A title already used (case-insensitively) or an invalid DSL raise CairnError 400.

        ``canvas_category="dataflow_canvas"`` creates an ingestion pipeline instead (its DSL checked as a
        pipeline and stored as given), for ``create_dataset(pipeline_id=...)``; none or "agent_canvas": an
        agent. The category cannot change later."""
        body = drop_none({"title": title, "dsl": plain(dsl) if dsl is not None else None, "description": description,
                          "canvas_type": canvas_type, "release": release, "template_id": template_id,
                          "dataset_ids": dataset_ids, "canvas_category": canvas_category})
        return Agent(self, self._call("POST", "/agents", json=body).get("data") or {})

    def update_agent(self, agent_id: str, title: str | None = None, description: str | None = None,
                     dsl: dict | None = None, canvas_type: str | None = None, release: bool | None = None) -> None:
        """Changes only the given fields (None: unchanged); ``release=True`` publishes the result."""
        body = drop_none({"title": title, "description": description, "dsl": plain(dsl), "canvas_type": canvas_type,
                          "release": release})
        self._call("PUT", f"/agents/{agent_id}", json=body)

    def delete_agent(self, agent_id: str) -> None:
        """Deletes the agent and its sessions."""
        self._call("DELETE", f"/agents/{agent_id}", json={})

    # ------------------------------------------------------------------ ingestion (pipelines)
    def ingest(self, doc_ids: list[str], run: str = "1", delete: bool = False, from_step: str | None = None) -> bool:
        """RAGFlow's ingestion control (``POST /documents/ingest``), for documents of any datasets at once,
        each through its dataset's pipeline or chunk method. ``run="1"`` starts (or reruns) ingestion,
        ``delete=True`` first removing the documents' chunks; ``run="2"`` cancels (every document must be
        RUNNING, else 400 and nothing is cancelled). ``from_step`` (Cairn; a component id of the pipeline)
        reruns from that step, reusing what the last run stored for the steps before it. Unknown or another
        workspace's documents are a 404 and nothing starts. Returns True; it does not wait (see
        ``DataSet.parse_documents`` to wait, which runs the pipeline of a pipeline dataset too)."""
        body = drop_none({"doc_ids": list(doc_ids), "run": str(run), "delete": delete, "from_step": from_step})
        return self._call("POST", "/documents/ingest", json=body).get("data")

    # ------------------------------------------------------------------ memories
    def create_memory(self, name: str, memory_type: list[str], embd_id: str, llm_id: str, **kwargs: Any) -> "Memory":
        """Creates a memory: ``memory_type`` a non-empty list of raw / semantic / episodic / procedural,
        ``embd_id`` and ``llm_id`` configured models as ``model_name@model_factory``. A taken name gets a
        ``(1)``, ``(2)``... suffix. Other keyword arguments (description, permission, memory_size,
        forgetting_policy, temperature, system_prompt, user_prompt, avatar) are sent as they are."""
        body = {"name": name, "memory_type": memory_type, "embd_id": embd_id, "llm_id": llm_id}
        body.update(drop_none(kwargs))
        return Memory(self, self._call("POST", "/memories", json=body)["data"])

    def list_memory(self, page: int = 1, page_size: int = 50, tenant_id: str | list[str] | None = None,
                    memory_type: str | list[str] | None = None, storage_type: str | None = None,
                    keywords: str | None = None) -> dict[str, Any]:
        """``{"memory_list": [Memory], "total_count": N}``: the memories the caller may manage, newest
        first; ``tenant_id`` owner(s), ``memory_type`` matches memories that include the type(s),
        ``keywords`` is a case-insensitive part of the name."""
        params = {
            "page": page, "page_size": page_size, "tenant_id": tenant_id, "memory_type": memory_type,
            "storage_type": storage_type, "keywords": keywords,
        }
        data = self._call("GET", "/memories", params=params).get("data") or {}
        items = items_of(data, "memory_list")
        total = data.get("total_count", len(items)) if isinstance(data, dict) else len(items)
        return {"memory_list": [Memory(self, m) for m in items], "total_count": total}

    def delete_memory(self, memory_id: str) -> None:
        """Deletes the memory with its messages."""
        self._call("DELETE", f"/memories/{memory_id}", json={})

    def add_message(self, memory_id: list[str], agent_id: str, session_id: str, user_input: str,
                    agent_response: str, user_id: str = "", *, valid_at: int | float | str | None = None) -> "MessagesAdded":
        """Stores one conversation turn in each memory (searchable at once) and starts the extraction of
        each. Returns the confirmation text (``"All add to task."``), a ``str`` that also carries
        ``.results`` and ``.message_ids``. ``user_id`` is sent for compatibility; the service always
        records the caller's own user id. All or nothing: any memory that is missing, not the caller's,
        or too small for the message raises and nothing is stored. ``valid_at`` (Cairn extension): when
        the turn was said, Unix seconds or ISO 8601 (default now)."""
        body = {
            "memory_id": memory_ids(memory_id), "agent_id": agent_id, "session_id": session_id,
            "user_input": user_input, "agent_response": agent_response, "user_id": user_id,
        }
        if valid_at is not None:
            body["valid_at"] = valid_at
        res = self._call("POST", "/messages", json=body)
        text = res.get("message")
        return MessagesAdded(text if isinstance(text, str) else "All add to task.", res.get("data"))

    def search_message(self, query: str, memory_id: list[str], agent_id: str | None = None, session_id: str | None = None,
                       user_id: str | None = None, similarity_threshold: float = 0.2,
                        keywords_similarity_weight: float = 0.7, top_n: int = 10, include_invalid: bool = False, *,
                        valid_since: int | float | str | None = None, valid_until: int | float | str | None = None,
                        message_type: list[str] | str | None = None, include_source: bool = False) -> list[dict]:
        """Hybrid search over enabled, not forgotten messages: ``similarity = w * term_similarity +
        (1 - w) * vector_similarity`` with ``w = keywords_similarity_weight`` (0.5 weighs keywords and
        meaning equally); the best ``top_n`` at or above ``similarity_threshold``, most recent first. Items no
        longer current (updated, contradicted, corrected or retracted) are left out unless ``include_invalid``.
        Each hit carries ``valid_date`` (ISO 8601). Cairn extensions: ``valid_since`` / ``valid_until``
        (Unix seconds or ISO 8601, inclusive; a date alone is the whole day) keep one period,
        ``message_type`` keeps those types, ``include_source`` adds to each extracted item the turn it
        came from (``source``)."""
        params = {
            "query": query, "memory_id": memory_ids(memory_id), "agent_id": agent_id, "session_id": session_id,
            "user_id": user_id, "similarity_threshold": similarity_threshold,
            "keywords_similarity_weight": keywords_similarity_weight, "top_n": top_n,
            "valid_since": valid_since, "valid_until": valid_until,
            "message_type": ",".join(message_type) if isinstance(message_type, (list, tuple)) else message_type,
            "include_source": True if include_source else None,
            "include_invalid": "true" if include_invalid else None,
        }
        return self._call("GET", "/messages/search", params=params).get("data") or []

    def get_recent_messages(self, memory_id: list[str], agent_id: str | None = None, session_id: str | None = None,
                            limit: int = 10, include_invalid: bool = False) -> list[dict]:
        """The most recent messages of the memories (every type, forgotten ones and items no longer current left
        out unless ``include_invalid``), newest first."""
        params = {"memory_id": memory_ids(memory_id), "agent_id": agent_id, "session_id": session_id, "limit": limit,
                  "include_invalid": "true" if include_invalid else None}
        return self._call("GET", "/messages", params=params).get("data") or []


RAGFlow = Client
"""Alias, so code written for ``ragflow_sdk`` runs with only the import changed."""
