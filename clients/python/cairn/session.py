"""Session: a conversation with a chat assistant or an agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import requests

from .base import Base, check, drop_none
from .errors import CairnError
from .message import Message, reference_chunks, reference_doc_aggs
from .sse import iter_events

if TYPE_CHECKING:
    from .client import Client


class Session(Base):
    """A session (spec "Session" fields: id, name, message, chat_id or agent_id, user_id)."""

    _defaults = {"id": None, "name": "New session", "chat_id": None, "agent_id": None, "user_id": None}

    def __init__(self, rag: "Client", res_dict: dict[str, Any] | None = None):
        super().__init__(rag, res_dict)
        # The spec names the opening messages `message`; RAGFlow's HTTP API sends `messages`.
        messages = self.__dict__.get("message", self.__dict__.get("messages"))
        if messages is None:
            messages = []
        self.__dict__.setdefault("message", messages)
        self.__dict__.setdefault("messages", messages)
        self._session_type = "agent" if self.agent_id and not self.chat_id else "chat"

    def ask(self, question: str = "", stream: bool = False, inputs: dict | None = None, release: Any = None,
            return_trace: Any = None, **kwargs: Any) -> Message | Iterator[Message]:
        """Asks a question in this session (RAGFlow's signature).

        Returns a :class:`Message` when ``stream`` is false, else an iterator of Messages whose
        ``content`` is the full answer so far (the last one carries the references).

        Chat sessions: extra keyword arguments are the values of the assistant's custom prompt variables.

        Agent sessions: ``inputs`` answers the Begin component's fields on the first turn, or the form of
        a paused run (``{field: {"value": v}}`` or ``{field: v}``); ``release`` runs the published version;
        ``return_trace`` adds the execution trace (``message.trace``); other keyword arguments
        (``user_id``, ``files``, ``chat_template_kwargs``, ``multitask_strategy``...) go into the request as they are. A run that
        pauses for input returns (or ends with) a Message whose ``user_inputs`` is the form
        (``{field: definition}``) and ``tips`` its text; answer it with ``ask(inputs={...})``.
        """
        if self._session_type == "agent":
            return self._ask_agent(question, stream, inputs=inputs, release=release, return_trace=return_trace, **kwargs)
        # Chat sessions have no such parameters: given values are prompt variables of those names.
        kwargs.update(drop_none({"inputs": inputs, "release": release, "return_trace": return_trace}))
        body = {"question": question, "stream": stream, "session_id": self.id, **kwargs}
        return self._converse(f"/chats/{self.chat_id}/completions", body, stream)

    def cancel(self) -> bool:
        """Stops this agent session's running turn (``POST /tasks/{session_id}/cancel``; the task id is the
        session id). True when a turn was running; closing a stream alone does not stop the run."""
        data = self.rag._call("POST", f"/tasks/{self.id}/cancel", json={}).get("data")
        if isinstance(data, dict):
            return bool(data.get("cancelled"))
        return bool(data)

    def _ask_agent(self, question: str, stream: bool, inputs: dict | None = None, release: Any = None,
                   return_trace: Any = None, **kwargs: Any) -> Message | Iterator[Message]:
        body = {
            "agent_id": self.agent_id,
            "query": question,
            "stream": stream,
            "session_id": self.id,
            "openai-compatible": False,
            **drop_none({"inputs": _plain_inputs(inputs), "release": release, "return_trace": return_trace}),
            **kwargs,
        }
        res = self.rag.post("/agents/chat/completions", json=body, stream=stream)
        if not stream:
            return self._agent_message(check(res).get("data"))
        res = self._stream_or_raise(res)
        return self._agent_stream(res, trace=bool(return_trace))

    def _converse(self, path: str, body: dict, stream: bool) -> Message | Iterator[Message]:
        res = self.rag.post(path, json=body, stream=stream)
        if not stream:
            return self._chat_message(check(res).get("data"), "")
        return self._chat_stream(self._stream_or_raise(res))

    @staticmethod
    def _stream_or_raise(res: requests.Response) -> requests.Response:
        """The response of a streamed request; an error envelope instead of a stream raises here, at the call."""
        content_type = res.headers.get("Content-Type", "")
        if res.status_code >= 400 or "json" in content_type:
            try:
                check(res)
            finally:
                res.close()
            res = _replay(res)
        return res

    # ------------------------------------------------------------------ chat answers
    def _chat_message(self, data: Any, previous: str) -> Message:
        if not isinstance(data, dict):
            data = {"answer": str(data) if data is not None else ""}
        fields = {k: v for k, v in data.items() if k not in ("answer", "reference")}
        answer = data.get("answer")
        content = answer if isinstance(answer, str) and answer else previous if not answer else str(answer)
        fields.update({
            "content": content,
            "reference": reference_chunks(data.get("reference")),
            "role": "assistant",
            "session_id": data.get("session_id") or self.id,
        })
        reference = data.get("reference")
        if isinstance(reference, dict) and isinstance(reference.get("grounding"), dict):
            fields["grounding"] = reference["grounding"]
        return Message(self.rag, fields)

    def _chat_stream(self, res: requests.Response) -> Iterator[Message]:
        content = ""
        try:
            for frame in iter_events(res.iter_lines()):
                data = frame.get("data")
                if not isinstance(data, dict):
                    continue
                message = self._chat_message(data, content)
                content = message.content
                yield message
        finally:
            res.close()

    # ------------------------------------------------------------------ agent answers
    def _agent_message(self, data: Any) -> Message:
        """The non-stream answer: the run's last event, its ``data`` holding the whole content, the
        reference, and ``structured``/``trace``/``usage`` when there are some."""
        if not isinstance(data, dict):
            raise CairnError(str(data), code=500)
        inner = data.get("data") if isinstance(data.get("data"), dict) else {}
        fields = {k: v for k, v in data.items() if k != "data"}
        fields.update({
            "content": inner.get("content") or "",
            "reference": reference_chunks(inner.get("reference")),
            "role": "assistant",
            "session_id": data.get("session_id") or self.id,
            "id": data.get("message_id") or data.get("id"),
        })
        doc_aggs = reference_doc_aggs(inner.get("reference"))
        if doc_aggs:
            fields["doc_aggs"] = doc_aggs
        for key in ("structured", "trace", "usage", "outputs", "elapsed_time", "tips"):
            if inner.get(key) is not None:
                fields[key] = inner[key]
        if data.get("event") == "user_inputs":
            fields["user_inputs"] = inner.get("inputs") or {}
        return Message(self.rag, fields)

    def _agent_stream(self, res: requests.Response, trace: bool = False) -> Iterator[Message]:
        """Messages of a streamed agent run.

        The service sends canvas events whose ``message`` content is a delta; each yielded Message carries
        the whole text so far (reasoning between ``<think>``/``</think>``, as in the non-stream answer):
        one per ``message`` event, one at ``message_end`` (with the reference), one at ``user_inputs``
        (the run paused: ``user_inputs``, ``tips``) and a last one at ``workflow_finished`` (content,
        reference, ``structured``, ``usage``, and ``trace`` when asked). The stream is read to its end,
        so once the loop is over the turn is over too.
        """
        content = ""
        reference: Any = None
        state: dict[str, Any] = {}
        structured: dict[str, Any] = {}
        steps: list[dict] = []

        def message(frame: dict, event: str, **extra: Any) -> Message:
            fields = {k: v for k, v in frame.items() if k != "data"}
            fields.update({
                "event": event,
                "content": content,
                "reference": reference_chunks(reference),
                "role": "assistant",
                "session_id": frame.get("session_id") or self.id,
                "id": frame.get("message_id") or frame.get("id"),
                **state,
                **extra,
            })
            doc_aggs = reference_doc_aggs(reference)
            if doc_aggs:
                fields["doc_aggs"] = doc_aggs
            return Message(self.rag, fields)

        try:
            for frame in iter_events(res.iter_lines()):
                event = frame.get("event")
                data = frame.get("data") if isinstance(frame.get("data"), dict) else {}
                if event == "message":
                    before = content
                    if data.get("start_to_think"):
                        content += "<think>"
                    elif data.get("end_to_think"):
                        content += "</think>"
                    piece = data.get("content")
                    if isinstance(piece, str):
                        content += piece
                    if content != before:
                        yield message(frame, event)
                elif event == "message_end":
                    if data.get("reference"):
                        reference = data["reference"]
                    yield message(frame, event)
                elif event == "user_inputs":
                    state["user_inputs"] = data.get("inputs") or {}
                    if data.get("tips") is not None:
                        state["tips"] = data["tips"]
                    yield message(frame, event)
                elif event == "node_finished":
                    outputs = data.get("outputs") if isinstance(data.get("outputs"), dict) else {}
                    if outputs.get("structured") is not None:
                        structured[data.get("component_id")] = outputs["structured"]
                    if isinstance(data.get("trace"), list):  # a server that sends the trace so far
                        steps[:] = data["trace"]
                    else:
                        steps.append({"component_id": data.get("component_id"), "trace": [data]})
                elif event == "workflow_finished":
                    extra: dict[str, Any] = {}
                    if structured:
                        extra["structured"] = structured
                    if data.get("usage") is not None:
                        extra["usage"] = data["usage"]
                    if data.get("outputs") is not None:
                        extra["outputs"] = data["outputs"]
                    if trace:
                        extra["trace"] = list(steps)
                    yield message(frame, event, **extra)
        finally:
            res.close()

    # ------------------------------------------------------------------ runs (agent sessions)
    def list_runs(self, page: int = 1, page_size: int = 30) -> list[dict]:
        """This agent session's runs, newest first (``GET /agents/{id}/sessions/{sid}/runs``).

        Each run is a dict: ``id`` (the turn's message id), ``status`` (running, finished, paused,
        failed, cancelled), ``trigger``, ``replay_of`` / ``from_component`` for a replay, ``query``,
        ``inputs``, times, and ``steps``: each component's ``status``, ``reused``, ``elapsed_time``,
        ``inputs``, ``outputs`` and ``trace``. A value over 4 KB is abridged to ``{truncated, size,
        full_value}``; :meth:`run_value` reads the whole value.
        """
        self._require_agent("list_runs")
        data = self.rag._call("GET", f"/agents/{self.agent_id}/sessions/{self.id}/runs",
                              params={"page": page, "page_size": page_size}).get("data")
        return list(data or [])

    def get_run(self, run_id: str) -> dict:
        """One run of this session, as :meth:`list_runs` lists it (404 when it is not one)."""
        self._require_agent("get_run")
        return self.rag._call("GET", f"/agents/{self.agent_id}/sessions/{self.id}/runs/{run_id}").get("data") or {}

    def run_value(self, full_value: str) -> Any:
        """The whole value behind an abridged one (its ``full_value`` link)."""
        prefix = "/api/v1"
        path = full_value[len(prefix):] if full_value.startswith(prefix) else full_value
        return self.rag._call("GET", path).get("data")

    def replay(self, run_id: str, from_component: str, inputs: dict | None = None,
               stream: bool = True) -> Message | Iterator[Message]:
        """Replays a run of this session as a new turn (``POST …/runs/{run_id}/replay``): components that
        finished before ``from_component`` take their recorded outputs (no model call), ``from_component``
        and what follows run anew. ``inputs`` replace the run's Begin inputs. Streams Messages like
        :meth:`ask` (``stream=False``: the whole answer)."""
        self._require_agent("replay")
        body = {"from_component": from_component, "stream": stream, **drop_none({"inputs": _plain_inputs(inputs)})}
        res = self.rag.post(f"/agents/{self.agent_id}/sessions/{self.id}/runs/{run_id}/replay", json=body, stream=stream)
        if not stream:
            return self._agent_message(check(res).get("data"))
        return self._agent_stream(self._stream_or_raise(res))

    def _require_agent(self, what: str) -> None:
        if self._session_type != "agent":
            raise CairnError(f"`{what}` is for agent sessions; this is a chat session", code=400)

    # ------------------------------------------------------------------ the session itself
    def update(self, update_message: dict) -> "Session":
        """Renames the session (``{"name": ...}``)."""
        if not isinstance(update_message, dict):
            raise CairnError("`update_message` must be a dict", code=400)
        owner = f"/agents/{self.agent_id}" if self._session_type == "agent" else f"/chats/{self.chat_id}"
        res = self.rag._call("PATCH", f"{owner}/sessions/{self.id}", json=update_message)
        data = res.get("data")
        self._update_from_dict(self.rag, data if isinstance(data, dict) else update_message)
        return self


def _plain_inputs(inputs: Any) -> Any:
    """``inputs`` as the service takes them, ``{field: {"value": v, ...}}``: a value that is not a dict is
    wrapped as ``{"value": v}``; resource objects (e.g. a ``user_inputs`` form sent back) become dicts."""
    if isinstance(inputs, Base):
        inputs = inputs.to_json()
    if not isinstance(inputs, dict):
        return inputs
    out = {}
    for key, value in inputs.items():
        if isinstance(value, Base):
            value = value.to_json()
        out[key] = value if isinstance(value, dict) else {"value": value}
    return out


def _replay(res: requests.Response) -> requests.Response:
    """A non-error JSON reply to a streamed request: treat its body as a single SSE frame."""
    body = res.content
    res._content = b"data:" + body.replace(b"\n", b" ") + b"\n\n"  # type: ignore[attr-defined]
    res._content_consumed = True  # type: ignore[attr-defined]
    return res
