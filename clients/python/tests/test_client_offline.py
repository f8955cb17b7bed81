"""The client's own logic, without a server: the SSE parser, streamed answers, resource objects, errors."""

from __future__ import annotations

import json

import pytest

from cairn import CairnError, ChunkUpdateError, Client, Document, Message, Session
from cairn.base import Base, query
from cairn.sse import iter_events


def frame(data, code=0, prefix="data:") -> bytes:
    return (prefix + json.dumps({"code": code, "data": data})).encode()


class FakeResponse:
    def __init__(self, lines: list[bytes]):
        self.lines = lines
        self.closed = False
        self.status_code = 200
        self.headers = {"Content-Type": "text/event-stream"}

    def iter_lines(self):
        yield from self.lines

    def close(self):
        self.closed = True


@pytest.fixture
def offline():
    return Client(api_key="k", base_url="127.0.0.1:1")


# ---------------------------------------------------------------------- SSE parsing
def test_data_prefix_is_stripped_with_or_without_a_space():
    lines = [frame({"answer": "a"}), frame({"answer": "ab"}, prefix="data: ")]
    assert [f["data"]["answer"] for f in iter_events(lines)] == ["a", "ab"]


def test_blank_comment_and_non_json_lines_are_skipped():
    lines = [b"", b": keep-alive", b"event: message", b"data:not json", frame({"answer": "x"}), b"garbage"]
    assert [f["data"]["answer"] for f in iter_events(lines)] == ["x"]


def test_a_frame_whose_data_is_true_ends_the_stream():
    lines = [frame({"answer": "x"}), frame(True), frame({"answer": "after the end"})]
    assert [f["data"]["answer"] for f in iter_events(lines)] == ["x"]


def test_done_ends_the_stream():
    lines = [frame({"answer": "x"}), b"data: [DONE]", frame({"answer": "after"})]
    assert len(list(iter_events(lines))) == 1


def test_an_error_frame_raises_with_its_code():
    lines = [frame({"answer": "x"}), b'data:{"code": 500, "message": "model failed"}']
    events = iter_events(lines)
    next(events)
    with pytest.raises(CairnError) as e:
        next(events)
    assert e.value.code == 500
    assert str(e.value) == "model failed"


# ---------------------------------------------------------------------- streamed chat answers
def test_chat_stream_messages_carry_the_full_text_and_the_final_references(offline):
    session = Session(offline, {"id": "s1", "chat_id": "c1"})
    ref = {"chunks": [{"id": "k1", "content": "granite", "document_id": "d1", "similarity": 0.8}], "total": 1}
    res = FakeResponse([
        frame({"answer": "Hel", "reference": {"chunks": []}, "id": "m1", "session_id": "s1"}),
        frame({"answer": "Hello there", "reference": {"chunks": []}, "id": "m1", "session_id": "s1"}),
        frame({"answer": "Hello there", "reference": ref, "id": "m1", "session_id": "s1", "final": True}),
        frame(True),
    ])
    messages = list(session._chat_stream(res))
    assert [m.content for m in messages] == ["Hel", "Hello there", "Hello there"]
    assert messages[0].reference == []
    assert messages[-1].reference == ref["chunks"]
    assert all(m.role == "assistant" and m.session_id == "s1" and m.id == "m1" for m in messages)
    assert res.closed


def test_a_final_frame_without_text_keeps_the_text_so_far(offline):
    session = Session(offline, {"id": "s1", "chat_id": "c1"})
    res = FakeResponse([frame({"answer": "All done"}), frame({"answer": "", "reference": {"chunks": [{"id": "k"}]}})])
    assert [m.content for m in session._chat_stream(res)] == ["All done", "All done"]


def event(name: str, data: dict, **envelope) -> bytes:
    return ("data:" + json.dumps({"event": name, "message_id": "m1", "session_id": "s1", "task_id": "s1",
                                  "data": data, **envelope})).encode()


def test_agent_stream_messages_carry_the_full_text_so_far(offline):
    session = Session(offline, {"id": "s1", "agent_id": "a1"})
    ref = {"chunks": [{"id": "k", "content": "granite"}], "doc_aggs": [{"doc_id": "d", "doc_name": "a.txt", "count": 1}], "total": 1}
    res = FakeResponse([
        event("workflow_started", {"inputs": {}}),
        event("node_started", {"component_id": "begin"}),
        event("message", {"content": "ha"}),
        event("message", {"content": ""}),
        event("message", {"content": "ha"}),
        event("message_end", {"reference": ref}),
        event("node_finished", {"component_id": "LLM:Answer", "outputs": {"content": "haha", "structured": {"n": 1}}}),
        event("workflow_finished", {"outputs": {"content": "haha"}, "usage": {"total_tokens": 3}}),
        b"data:[DONE]",
    ])
    messages = list(session._agent_stream(res))
    assert [(m.event, m.content) for m in messages] == [
        ("message", "ha"), ("message", "haha"), ("message_end", "haha"), ("workflow_finished", "haha"),
    ]  # deltas are appended, even when one repeats the text so far
    assert messages[0].reference == []
    assert messages[-2].reference == ref["chunks"] and messages[-1].reference == ref["chunks"]
    assert messages[-1].doc_aggs == ref["doc_aggs"]
    assert messages[-1].structured == {"LLM:Answer": {"n": 1}}
    assert messages[-1].usage == {"total_tokens": 3}
    assert messages[-1].trace is None  # only when asked for
    assert all(m.id == "m1" and m.session_id == "s1" and m.role == "assistant" for m in messages)
    assert res.closed


def test_agent_stream_reasoning_is_wrapped_in_think_tags(offline):
    session = Session(offline, {"id": "s1", "agent_id": "a1"})
    res = FakeResponse([
        event("message", {"content": "", "start_to_think": True}),
        event("message", {"content": "hmm"}),
        event("message", {"content": "", "end_to_think": True}),
        event("message", {"content": "Yes."}),
        b"data:[DONE]",
    ])
    assert [m.content for m in session._agent_stream(res)][-1] == "<think>hmm</think>Yes."


def test_agent_stream_pause_exposes_the_form(offline):
    session = Session(offline, {"id": "s1", "agent_id": "a1"})
    form = {"city": {"name": "City", "type": "line", "value": None}}
    res = FakeResponse([event("user_inputs", {"inputs": form, "tips": "Where to?"}), b"data:[DONE]"])
    [paused] = list(session._agent_stream(res))
    assert (paused.event, paused.user_inputs, paused.tips, paused.content) == ("user_inputs", form, "Where to?", "")


def test_agent_stream_trace_when_asked(offline):
    session = Session(offline, {"id": "s1", "agent_id": "a1"})
    lines = [
        event("node_finished", {"component_id": "begin", "outputs": {}}),
        event("message", {"content": "x"}),
        event("node_finished", {"component_id": "Message:Out", "outputs": {"content": "x"}}),
        event("workflow_finished", {}),
    ]
    last = list(session._agent_stream(FakeResponse(lines), trace=True))[-1]
    assert [t["component_id"] for t in last.trace] == ["begin", "Message:Out"]
    assert last.trace[0]["trace"][0]["component_id"] == "begin"


def test_agent_stream_error_frame_raises(offline):
    session = Session(offline, {"id": "s1", "agent_id": "a1"})
    res = FakeResponse([event("message", {"content": "x"}), b'data:{"code": 500, "message": "LLM:Answer failed", "data": false}'])
    stream = session._agent_stream(res)
    assert next(stream).content == "x"
    with pytest.raises(CairnError) as e:
        next(stream)
    assert (e.value.code, e.value.message) == (500, "LLM:Answer failed")
    assert res.closed


def test_agent_non_stream_answer(offline):
    session = Session(offline, {"id": "s1", "agent_id": "a1"})
    data = {"event": "workflow_finished", "message_id": "m1", "session_id": "s1", "task_id": "s1",
            "data": {"content": "Hello", "reference": {"chunks": {"k": {"id": "k"}}, "doc_aggs": {}},
                     "structured": {"LLM:A": {"x": 1}}, "trace": [{"component_id": "begin", "trace": []}],
                     "usage": {"total_tokens": 2}}}
    m = session._agent_message(data)
    assert (m.content, m.id, m.session_id, m.event) == ("Hello", "m1", "s1", "workflow_finished")
    assert m.reference == [{"id": "k"}]
    assert m.structured == {"LLM:A": {"x": 1}} and m.trace[0]["component_id"] == "begin" and m.usage == {"total_tokens": 2}
    assert m.user_inputs is None
    paused = session._agent_message({"event": "user_inputs", "message_id": "m2", "data": {"content": "", "inputs": {"f": {}}, "tips": "t"}})
    assert (paused.user_inputs, paused.tips) == ({"f": {}}, "t")


def test_agent_inputs_are_sent_as_value_objects():
    from cairn.session import _plain_inputs

    assert _plain_inputs({"a": "x", "b": {"value": 2, "type": "integer"}}) == {"a": {"value": "x"}, "b": {"value": 2, "type": "integer"}}
    assert _plain_inputs(None) is None


# ---------------------------------------------------------------------- resource objects
def test_every_key_becomes_an_attribute_and_nested_dicts_objects(offline):
    doc = Document(offline, {"id": "d", "parser_config": {"raptor": {"use_raptor": False}}, "brand_new_key": 7})
    assert doc.brand_new_key == 7
    assert doc.parser_config.raptor.use_raptor is False
    assert doc.parser_config["raptor"] == {"use_raptor": False}
    assert doc.to_json()["parser_config"] == {"raptor": {"use_raptor": False}}


def test_document_fields_default_to_the_spec_values(offline):
    doc = Document(offline, {"id": "d"})
    assert (doc.name, doc.chunk_method, doc.source_type, doc.size, doc.run, doc.progress) == ("", "naive", "local", 0, "UNSTART", 0.0)


def test_a_key_named_like_a_method_does_not_shadow_it(offline):
    doc = Document(offline, {"id": "d", "update": "a value"})
    assert callable(doc.update)
    assert doc.to_json()["update"] == "a value"
    assert doc["update"] == "a value"


def test_session_message_and_messages_are_the_same_list(offline):
    s = Session(offline, {"id": "s", "chat_id": "c", "messages": [{"role": "assistant", "content": "Hi"}]})
    assert s.message == s.messages == [{"role": "assistant", "content": "Hi"}]


def test_message_iterates_as_itself(offline):
    m = Message(offline, {"content": "x"})
    assert list(m) == [m]


def test_objects_compare_equal_to_dicts(offline):
    assert Base(offline, {"a": 1, "b": {"c": 2}}) == {"a": 1, "b": {"c": 2}}


# ---------------------------------------------------------------------- transport details
def test_query_parameters_drop_none_and_send_booleans_as_words():
    assert query({"a": None, "desc": True, "x": False, "ids": ["1", "2"], "n": 3}) == {
        "desc": "true", "x": "false", "ids": ["1", "2"], "n": 3,
    }


def test_base_url_and_version_make_the_api_url():
    assert Client("k", "http://h:9380/", version="v1").api_url == "http://h:9380/api/v1"
    assert Client("k", "h:9380").api_url == "http://h:9380/api/v1"
    assert Client("k").authorization_header == {"Authorization": "Bearer k"}


def test_errors_are_cairn_errors_with_code_and_message():
    e = CairnError("Not Found: x", code=404)
    assert (e.code, e.message, str(e)) == (404, "Not Found: x", "Not Found: x")
    u = ChunkUpdateError(1002, "Chunk Update Failed: blank", {"why": "blank"})
    assert isinstance(u, CairnError)
    assert (u.code, u.message, u.details) == (1002, "Chunk Update Failed: blank", {"why": "blank"})


def test_local_validation_errors_are_400(offline):
    with pytest.raises(CairnError) as e:
        Document(offline, {"id": "d", "dataset_id": "x"}).update({"meta_fields": ["not", "a", "dict"]})
    assert e.value.code == 400
