"""Chat sessions and conversation: spec "Session", "Message", "Sessions", "Prompt variables", "HTTP conversation behaviour"."""

from __future__ import annotations

import time
import types

import pytest

from cairn import CairnError, Message, Session
from support import unique

NO_KNOWLEDGE = {"system": "You are a concise assistant.", "parameters": [], "empty_response": ""}


@pytest.fixture
def chat(client, llm_id):
    """A chat assistant without datasets ({knowledge} removed, empty response left empty), on the fake model."""
    c = client.create_chat(name=unique("sessions"), llm_id=llm_id, prompt_config=NO_KNOWLEDGE)
    yield c
    try:
        client.delete_chats(ids=[c.id])
    except CairnError:
        pass


def make_chat_with(client, llm_id, system: str, parameters: list[dict]):
    return client.create_chat(name=unique("vars"), llm_id=llm_id,
                              prompt_config={"system": system, "parameters": parameters, "empty_response": ""})


# ---------------------------------------------------------------------- Chat.create_session
def test_create_session_defaults(chat):
    session = chat.create_session()
    assert isinstance(session, Session)
    assert session.id
    assert session.name == "New session"  # name: default `New session`
    assert session.chat_id == chat.id
    [opening] = session.message  # default: one assistant message with a short greeting
    assert opening["role"] == "assistant"
    assert opening["content"]


def test_create_session_with_a_name(chat):
    assert chat.create_session(name="Trip planning").name == "Trip planning"


def test_create_session_of_an_unknown_chat_is_404(client, chat):
    ghost = type(chat)(client, {"id": "e" * 32})
    with pytest.raises(CairnError) as e:
        ghost.create_session()
    assert e.value.code == 404


# ---------------------------------------------------------------------- Chat.list_sessions
def test_list_sessions_newest_first_ascending_and_paged(chat):
    a, b, c = (chat.create_session(name=n) for n in "abc")
    assert [s.id for s in chat.list_sessions()] == [c.id, b.id, a.id]
    assert [s.id for s in chat.list_sessions(desc=False)] == [a.id, b.id, c.id]
    assert [s.id for s in chat.list_sessions(page=1, page_size=2)] == [c.id, b.id]
    assert [s.id for s in chat.list_sessions(page=2, page_size=2)] == [a.id]


def test_list_sessions_by_update_time(chat):
    a, b = chat.create_session(name="a"), chat.create_session(name="b")
    time.sleep(0.01)
    a.update({"name": "a2"})
    assert chat.list_sessions(orderby="update_time")[0].id == a.id


def test_list_sessions_page_size_defaults_to_30(chat):
    for i in range(31):
        chat.create_session(name=f"s{i}")
    assert len(chat.list_sessions()) == 30
    assert len(chat.list_sessions(page=2)) == 1


def test_list_sessions_by_id_and_name(chat):
    target = chat.create_session(name="Target")
    chat.create_session(name="Other")
    assert [s.id for s in chat.list_sessions(id=target.id)] == [target.id]
    assert [s.id for s in chat.list_sessions(name="Target")] == [target.id]


def test_list_sessions_by_user_id(chat):
    session = chat.create_session()
    assert chat.list_sessions(user_id="nobody-" + unique("u")) == []
    assert session.id in [s.id for s in chat.list_sessions()]


# ---------------------------------------------------------------------- Session.update
def test_session_update_renames(chat):
    session = chat.create_session()
    session.update({"name": "Renamed"})
    assert session.name == "Renamed"
    assert chat.list_sessions(id=session.id)[0].name == "Renamed"


# ---------------------------------------------------------------------- Chat.delete_sessions
def test_delete_sessions_by_ids(chat):
    gone, kept = chat.create_session(name="gone"), chat.create_session(name="kept")
    assert chat.delete_sessions(ids=[gone.id]) is None
    assert [s.id for s in chat.list_sessions()] == [kept.id]


@pytest.mark.parametrize("ids", [None, []])
def test_delete_sessions_without_ids_deletes_nothing(chat, ids):
    chat.create_session()
    chat.delete_sessions(ids=ids)
    assert len(chat.list_sessions()) == 1


def test_delete_sessions_delete_all(chat):
    for n in "xyz":
        chat.create_session(name=n)
    chat.delete_sessions(delete_all=True)
    assert chat.list_sessions() == []


def test_delete_sessions_with_an_unknown_id_is_404(chat):
    kept = chat.create_session()
    with pytest.raises(CairnError) as e:
        chat.delete_sessions(ids=["f" * 32])
    assert e.value.code == 404
    assert [s.id for s in chat.list_sessions()] == [kept.id]


def test_delete_sessions_with_some_unknown_or_duplicate_ids_deletes_the_rest_without_raising(chat):
    gone, kept = chat.create_session(name="gone"), chat.create_session(name="kept")
    assert chat.delete_sessions(ids=[gone.id, "f" * 32, gone.id]) is None
    assert [s.id for s in chat.list_sessions()] == [kept.id]


# ---------------------------------------------------------------------- Session.ask
def test_ask_without_stream_returns_one_message(chat, fake_llm):
    session = chat.create_session()
    question = f"What is the tide at {unique('port')}?"
    message = session.ask(question, stream=False)
    assert isinstance(message, Message)
    assert message.content == f"Echo: {question}"  # the fake model echoes the question
    assert message.role == "assistant"
    assert message.id
    assert message.session_id == session.id
    assert message.reference == []  # no datasets, nothing retrieved
    fake_llm.wait_for_call(question)


def test_ask_with_stream_yields_messages_with_the_full_text_so_far(chat):
    session = chat.create_session()
    question = f"please describe the harbour of {unique('town')} in detail"
    stream = session.ask(question, stream=True)
    assert isinstance(stream, types.GeneratorType) or hasattr(stream, "__next__")
    messages = list(stream)
    assert len(messages) >= 2
    assert all(isinstance(m, Message) for m in messages)
    for before, after in zip(messages, messages[1:]):
        assert after.content.startswith(before.content)  # cumulative: each carries the full text so far
    assert messages[-1].content == f"Echo: {question}"
    assert all(m.session_id == session.id for m in messages)


def test_streamed_and_whole_answers_agree(chat):
    session = chat.create_session()
    question = f"same answer {unique('q')}"
    whole = session.ask(question, stream=False).content
    streamed = list(session.ask(question, stream=True))[-1].content
    assert whole == streamed


def test_only_the_latest_question_is_sent_and_the_session_keeps_the_history(chat, fake_llm):
    session = chat.create_session()
    first, second = f"first question {unique('a')}", f"second question {unique('b')}"
    session.ask(first, stream=False)
    session.ask(second, stream=False)
    seen = fake_llm.wait_for_call(second)
    assert any(first in str(m["content"]) for m in seen)  # the earlier turn reached the model
    stored = chat.list_sessions(id=session.id)[0].message
    assert any(first in str(m.get("content", "")) for m in stored)
    assert any(second in str(m.get("content", "")) for m in stored)


def test_custom_prompt_variables_are_passed_as_keyword_arguments(client, llm_id, fake_llm):
    chat = make_chat_with(client, llm_id, "You help travellers in {city}.", [{"key": "city", "optional": False}])
    try:
        city = unique("Lisbon")
        question = f"where to eat {unique('q')}?"
        answer = chat.create_session().ask(question, stream=False, city=city)
        assert answer.content == f"Echo: {question}"
        seen = fake_llm.wait_for_call(question)
        assert any(f"You help travellers in {city}." in str(m["content"]) for m in seen)
    finally:
        client.delete_chats(ids=[chat.id])


def test_a_missing_mandatory_variable_fails_the_call(client, llm_id):
    chat = make_chat_with(client, llm_id, "You help travellers in {city}.", [{"key": "city", "optional": False}])
    try:
        session = chat.create_session()
        with pytest.raises(CairnError) as e:
            session.ask("where to eat?", stream=False)
        assert e.value.code == 400
        with pytest.raises(CairnError) as e:
            list(session.ask("where to eat?", stream=True))
        assert e.value.code == 400
    finally:
        client.delete_chats(ids=[chat.id])


def test_an_optional_variable_may_be_omitted(client, llm_id):
    chat = make_chat_with(client, llm_id, "You help travellers. {mood}", [{"key": "mood", "optional": True}])
    try:
        question = f"any tips {unique('q')}?"
        assert chat.create_session().ask(question, stream=False).content == f"Echo: {question}"
    finally:
        client.delete_chats(ids=[chat.id])


def test_a_non_streamed_message_iterates_as_itself(chat):
    # Code written for ragflow_sdk loops over ask() even without streaming.
    message = chat.create_session().ask("loop?", stream=False)
    assert list(message) == [message]
