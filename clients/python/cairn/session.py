"""Session: a conversation with a chat assistant or an agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import requests

from .base import Base, check, drop_none
from .errors import CairnError
from .message import Message, reference_chunks
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

    def ask(self, question: str = "", stream: bool = False, **kwargs: Any) -> Message | Iterator[Message]:
        """Asks a question in this session.

        Returns a :class:`Message` when ``stream`` is false, else an iterator of Messages whose
        ``content`` is the full answer so far (the last one carries the references). Extra keyword
        arguments are the values of the assistant's custom prompt variables (chat sessions) or
        agent parameters such as ``inputs``, ``release``, ``return_trace`` (agent sessions).
        """
        if self._session_type == "agent":
            return self._ask_agent(question, stream, **kwargs)
        body = {"question": question, "stream": stream, "session_id": self.id, **kwargs}
        return self._converse(f"/chats/{self.chat_id}/completions", body, stream, agent=False)

    def _ask_agent(self, question: str, stream: bool, inputs: dict | None = None, release: Any = None,
                   return_trace: Any = None, **kwargs: Any) -> Message | Iterator[Message]:
        body = {
            "agent_id": self.agent_id,
            "query": question,
            "stream": stream,
            "session_id": self.id,
            "openai-compatible": False,
            **drop_none({"inputs": inputs, "release": release, "return_trace": return_trace}),
            **kwargs,
        }
        return self._converse("/agents/chat/completions", body, stream, agent=True)

    def _converse(self, path: str, body: dict, stream: bool, agent: bool) -> Message | Iterator[Message]:
        res = self.rag.post(path, json=body, stream=stream)
        if not stream:
            data = check(res).get("data")
            return self._agent_message(data) if agent else self._chat_message(data, "")
        content_type = res.headers.get("Content-Type", "")
        if res.status_code >= 400 or "json" in content_type:
            try:
                check(res)  # an error envelope instead of a stream raises here, at the call
            finally:
                res.close()
            res = _replay(res)
        return self._agent_stream(res) if agent else self._chat_stream(res)

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
        if not isinstance(data, dict):
            raise CairnError(str(data), code=500)
        inner = data.get("data") if isinstance(data.get("data"), dict) else data
        fields = {k: v for k, v in data.items() if k != "data"}
        fields.update({
            "content": inner.get("content") or "",
            "reference": reference_chunks(inner.get("reference")),
            "role": "assistant",
            "session_id": data.get("session_id") or self.id,
            "id": data.get("message_id") or data.get("id"),
        })
        for key in ("structured", "trace"):
            if key in inner:
                fields[key] = inner[key]
        return Message(self.rag, fields)

    def _agent_stream(self, res: requests.Response) -> Iterator[Message]:
        content = ""
        try:
            for frame in iter_events(res.iter_lines()):
                event = frame.get("event")
                data = frame.get("data") if isinstance(frame.get("data"), dict) else {}
                if event == "message":
                    piece = data.get("content") or ""
                    # Cumulative (spec) or delta (RAGFlow) content: either way the message is the full text so far.
                    content = piece if content and piece.startswith(content) else content + piece
                    yield self._agent_message({**frame, "data": {**data, "content": content}})
                elif event == "message_end":
                    yield self._agent_message({**frame, "data": {**data, "content": content}})
                    return
        finally:
            res.close()

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


def _replay(res: requests.Response) -> requests.Response:
    """A non-error JSON reply to a streamed request: treat its body as a single SSE frame."""
    body = res.content
    res._content = b"data:" + body.replace(b"\n", b" ") + b"\n\n"  # type: ignore[attr-defined]
    res._content_consumed = True  # type: ignore[attr-defined]
    return res
