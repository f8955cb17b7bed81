"""Agents through the client: spec "Agents", "Sessions" (agent rows), "Message"; issue 10 item 7.

Every test runs against the live Cairn of conftest, in a workspace of its own whose default chat model
is the fake OpenAI-compatible server (it answers `Echo: <last user message>`, streamed word by word).
"""

from __future__ import annotations

import threading
import time

import pytest

from cairn import Agent, CairnError, Client, Message, Session
from support import unique

PROLOGUE = "Hi, I am an agent."


# ---------------------------------------------------------------------- canvases (RAGFlow DSL)
def canvas(components: dict) -> dict:
    return {"components": components, "globals": {}, "history": [], "path": [], "retrieval": [],
            "graph": {"nodes": [], "edges": []}}


def llm_canvas(begin: dict | None = None, prompt: str = "{sys.query}", llm: dict | None = None) -> dict:
    """Begin → LLM → Message."""
    return canvas({
        "begin": {"obj": {"component_name": "Begin", "params": {"mode": "conversational", "prologue": PROLOGUE, **(begin or {})}},
                  "downstream": ["LLM:Answer"], "upstream": []},
        "LLM:Answer": {"obj": {"component_name": "LLM", "params": {"sys_prompt": "Be brief.", "prompts": [{"role": "user", "content": prompt}], **(llm or {})}},
                       "downstream": ["Message:Out"], "upstream": ["begin"]},
        "Message:Out": {"obj": {"component_name": "Message", "params": {"content": ["{LLM:Answer@content}"]}},
                        "downstream": [], "upstream": ["LLM:Answer"]},
    })


def task_canvas() -> dict:
    """A task-mode Begin with one mandatory field, `topic`, used in the LLM's prompt."""
    begin = {"mode": "task", "inputs": {"topic": {"name": "Topic", "type": "line", "optional": False}}}
    return llm_canvas(begin=begin, prompt="Write about {begin@topic}")


def form_canvas() -> dict:
    """Begin → UserFillUp (one field, `city`) → Message: the run pauses until `city` is answered."""
    return canvas({
        "begin": {"obj": {"component_name": "Begin", "params": {"prologue": PROLOGUE}}, "downstream": ["UserFillUp:Ask"], "upstream": []},
        "UserFillUp:Ask": {"obj": {"component_name": "UserFillUp", "params": {
            "inputs": {"city": {"name": "City", "type": "line", "optional": False}}, "tips": "Which city?"}},
            "downstream": ["Message:Out"], "upstream": ["begin"]},
        "Message:Out": {"obj": {"component_name": "Message", "params": {"content": ["You chose {UserFillUp:Ask@city}."]}},
                        "downstream": [], "upstream": ["UserFillUp:Ask"]},
    })


SLOW_DONE = "finished after the wait"


def slow_canvas() -> dict:
    """Begin → CodeExec (busy for as many ms as the question says) → Message: a turn that is surely still running when stopped."""
    script = "function main({ ms }) { const end = Date.now() + Number(ms); while (Date.now() < end) {} return 1; }"
    comps = {
        "begin": {"obj": {"component_name": "Begin", "params": {"prologue": PROLOGUE}}, "downstream": ["CodeExec:Wait"], "upstream": []},
        "CodeExec:Wait": {"obj": {"component_name": "CodeExec", "params": {"lang": "javascript", "script": script, "arguments": {"ms": "sys.query"}, "timeout": 60}},
                          "downstream": ["Message:Out"], "upstream": ["begin"]},
        "Message:Out": {"obj": {"component_name": "Message", "params": {"content": [SLOW_DONE]}}, "downstream": [], "upstream": ["CodeExec:Wait"]},
    }
    return canvas(comps)


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def account(new_account, setup_fake_models):
    """A workspace of its own whose default chat model is the fake."""
    acc = new_account()
    setup_fake_models(acc.client)
    return acc


@pytest.fixture(scope="module")
def rag(account) -> Client:
    return account.client


@pytest.fixture
def agent(rag):
    a = rag.create_agent(title=unique("agent"), dsl=llm_canvas(), description="answers briefly")
    yield a
    try:
        rag.delete_agent(a.id)
    except CairnError:
        pass


def make_agent(rag: Client, dsl: dict, **kwargs) -> Agent:
    return rag.create_agent(title=unique("agent"), dsl=dsl, **kwargs)


# ---------------------------------------------------------------------- create / get
def test_create_agent_returns_the_agent(rag):
    title = unique("Guide")
    agent = rag.create_agent(title, llm_canvas(), description="answers briefly")
    assert isinstance(agent, Agent)
    assert agent.id
    assert (agent.title, agent.description) == (title, "answers briefly")
    assert set(agent.dsl.components.keys()) == {"begin", "LLM:Answer", "Message:Out"}
    assert agent.release is False  # not published
    assert agent.create_time and agent.update_time

    got = rag.get_agent(agent.id)
    assert (got.id, got.title, got.description) == (agent.id, title, "answers briefly")
    assert got.dsl["components"]["Message:Out"]["obj"]["params"]["content"] == ["{LLM:Answer@content}"]


def test_create_agent_keeps_the_ragflow_signature(rag):
    # ragflow_sdk: create_agent(title, dsl, description=None) and callers ignore the (None) result.
    title = unique("positional")
    rag.create_agent(title, llm_canvas())
    [found] = rag.list_agents(title=title)
    assert found.description is None


def test_create_agent_with_a_title_in_use_is_400(rag, agent):
    with pytest.raises(CairnError) as e:
        rag.create_agent(title=agent.title.upper(), dsl=llm_canvas())  # titles compare case-insensitively
    assert e.value.code == 400
    assert e.value.message == f"{agent.title.upper()} already exists."


def test_create_agent_with_an_invalid_dsl_names_the_component_and_param(rag):
    dsl = llm_canvas()
    dsl["components"]["Message:Out"]["obj"]["params"]["content"] = 42
    with pytest.raises(CairnError) as e:
        rag.create_agent(title=unique("broken"), dsl=dsl)
    assert e.value.code == 400
    assert "Message:Out" in e.value.message and "content" in e.value.message
    assert rag.list_agents(keywords="broken-") == []


def test_create_agent_without_a_begin_is_400(rag):
    dsl = llm_canvas()
    del dsl["components"]["begin"]
    dsl["components"]["LLM:Answer"]["upstream"] = []
    with pytest.raises(CairnError) as e:
        rag.create_agent(title=unique("headless"), dsl=dsl)
    assert e.value.code == 400
    assert "begin" in e.value.message


def test_get_agent_of_an_unknown_id_is_404(rag):
    with pytest.raises(CairnError) as e:
        rag.get_agent("0" * 32)
    assert e.value.code == 404


# ---------------------------------------------------------------------- update / delete
def test_update_agent_changes_only_the_given_fields(rag, agent):
    before = rag.get_agent(agent.id)
    time.sleep(1.1)  # update_time is in seconds
    assert rag.update_agent(agent.id, title=agent.title + "-renamed") is None
    after = rag.get_agent(agent.id)
    assert after.title == agent.title + "-renamed"
    assert after.description == "answers briefly"  # None: unchanged
    assert after.dsl == before.dsl
    assert after.update_time > before.update_time


def test_update_agent_dsl_and_description(rag, agent):
    dsl = agent.dsl.to_json()
    dsl["components"]["LLM:Answer"]["obj"]["params"]["sys_prompt"] = "Be very brief."
    rag.update_agent(agent.id, dsl=dsl, description="shorter")
    got = rag.get_agent(agent.id)
    assert got.description == "shorter"
    assert got.dsl.components["LLM:Answer"].obj.params.sys_prompt == "Be very brief."
    # An Agent's own dsl object can be sent back as it is.
    rag.update_agent(agent.id, dsl=got.dsl)
    assert rag.get_agent(agent.id).dsl == got.dsl


def test_update_agent_errors(rag, agent):
    other = make_agent(rag, llm_canvas())
    with pytest.raises(CairnError) as e:
        rag.update_agent(agent.id, title=other.title)
    assert (e.value.code, e.value.message) == (400, f"{other.title} already exists.")
    bad = llm_canvas()
    bad["components"]["LLM:Answer"]["obj"]["params"]["prompts"] = []
    with pytest.raises(CairnError) as e:
        rag.update_agent(agent.id, dsl=bad)
    assert e.value.code == 400 and "LLM:Answer" in e.value.message and "prompts" in e.value.message
    with pytest.raises(CairnError) as e:
        rag.update_agent("0" * 32, title=unique("ghost"))
    assert e.value.code == 404


def test_delete_agent(rag):
    agent = make_agent(rag, llm_canvas())
    session = agent.create_session()
    assert rag.delete_agent(agent.id) is None
    with pytest.raises(CairnError) as e:
        rag.get_agent(agent.id)
    assert e.value.code == 404
    assert rag.list_agents(id=agent.id) == []
    with pytest.raises(CairnError) as e:
        session.ask("still there?", stream=False)
    assert e.value.code == 404
    with pytest.raises(CairnError) as e:
        rag.delete_agent(agent.id)
    assert e.value.code == 404


# ---------------------------------------------------------------------- list
def test_list_agents_paging_ordering_and_filters(new_account):
    rag = new_account().client
    assert rag.list_agents() == []  # always a list
    created = []
    for name in ("alpha", "beta", "gamma"):
        created.append(rag.create_agent(title=f"{name}-{unique('list')}", dsl=llm_canvas()))
        time.sleep(0.01)
    a, b, c = created
    assert [x.id for x in rag.list_agents()] == [c.id, b.id, a.id]  # update_time, newest first
    assert [x.id for x in rag.list_agents(desc=False)] == [a.id, b.id, c.id]
    assert [x.id for x in rag.list_agents(page=1, page_size=2)] == [c.id, b.id]
    assert [x.id for x in rag.list_agents(page=2, page_size=2)] == [a.id]
    assert rag.list_agents(page=3, page_size=2) == []

    time.sleep(0.01)
    rag.update_agent(a.id, description="touched")
    assert rag.list_agents()[0].id == a.id  # orderby update_time by default
    assert [x.id for x in rag.list_agents(orderby="create_time")] == [c.id, b.id, a.id]
    assert [x.id for x in rag.list_agents(orderby="title", desc=False)] == [a.id, b.id, c.id]

    assert [x.id for x in rag.list_agents(id=b.id)] == [b.id]
    assert [x.id for x in rag.list_agents(title=b.title)] == [b.id]
    assert [x.id for x in rag.list_agents(keywords="GAMMA")] == [c.id]
    assert rag.list_agents(title="no such agent") == []
    assert all(isinstance(x, Agent) for x in rag.list_agents())


def test_list_agents_page_size_defaults_to_30(new_account):
    rag = new_account().client
    for i in range(31):
        rag.create_agent(title=f"many-{i}", dsl=llm_canvas())
    assert len(rag.list_agents()) == 30
    assert len(rag.list_agents(page=2)) == 1


# ---------------------------------------------------------------------- sessions
def test_create_session_returns_the_prologue(agent):
    session = agent.create_session()
    assert isinstance(session, Session)
    assert session.id
    assert session.agent_id == agent.id
    assert session.source == "agent"
    [opening] = session.message
    assert (opening["role"], opening["content"]) == ("assistant", PROLOGUE)
    assert opening["id"]
    assert session.messages == session.message
    assert session.dsl.components["begin"]


def test_create_session_with_name_and_user_id(agent):
    session = agent.create_session(name="Trip", user_id="traveller-1")
    assert (session.name, session.user_id) == ("Trip", "traveller-1")
    assert [s.id for s in agent.list_sessions(user_id="traveller-1")] == [session.id]
    assert agent.list_sessions(user_id="nobody") == []


def test_create_session_of_the_published_version(rag):
    draft_only = make_agent(rag, llm_canvas())
    with pytest.raises(CairnError) as e:
        draft_only.create_session(release=True)
    assert (e.value.code, e.value.message) == (400, "No available published version")

    published = make_agent(rag, llm_canvas(), release=True)
    assert rag.get_agent(published.id).release is True
    session = published.create_session(release=True)
    assert session.version_title
    question = f"published {unique('q')}"
    assert session.ask(question, stream=False).content == f"Echo: {question}"


def test_get_session(agent):
    session = agent.create_session(name="one")
    got = agent.get_session(session.id)
    assert (got.id, got.name, got.agent_id) == (session.id, "one", agent.id)
    for missing in ("0" * 32, "not-an-id"):
        with pytest.raises(CairnError) as e:
            agent.get_session(missing)
        assert e.value.code == 404


def test_list_sessions_ordering_and_paging(agent):
    a, b, c = (agent.create_session(name=n) for n in "abc")
    assert [s.id for s in agent.list_sessions()] == [c.id, b.id, a.id]
    assert [s.id for s in agent.list_sessions(desc=False)] == [a.id, b.id, c.id]
    assert [s.id for s in agent.list_sessions(page=1, page_size=2)] == [c.id, b.id]
    assert [s.id for s in agent.list_sessions(page=2, page_size=2)] == [a.id]
    assert [s.id for s in agent.list_sessions(id=b.id)] == [b.id]
    assert all(isinstance(s, Session) and s.agent_id == agent.id for s in agent.list_sessions())
    time.sleep(0.01)
    a.ask("bump", stream=False)  # a turn updates the session
    assert agent.list_sessions()[0].id == a.id  # orderby update_time by default
    assert agent.list_sessions(orderby="create_time")[0].id == c.id
    assert "dsl" not in agent.list_sessions(dsl=False)[0].to_json()


def test_delete_sessions(agent):
    gone, kept = agent.create_session(name="gone"), agent.create_session(name="kept")
    assert agent.delete_sessions(ids=[gone.id]) is None
    assert [s.id for s in agent.list_sessions()] == [kept.id]
    agent.delete_sessions(ids=None)  # nothing without ids or delete_all
    assert len(agent.list_sessions()) == 1
    with pytest.raises(CairnError) as e:
        agent.get_session(gone.id)
    assert e.value.code == 404
    agent.create_session()
    agent.delete_sessions(delete_all=True)
    assert agent.list_sessions() == []


def test_delete_sessions_partial_and_all_unknown(agent):
    gone, kept = agent.create_session(name="gone"), agent.create_session(name="kept")
    assert agent.delete_sessions(ids=[gone.id, "0" * 32, gone.id]) is None  # partial: code 0, no raise
    assert [s.id for s in agent.list_sessions()] == [kept.id]
    with pytest.raises(CairnError) as e:
        agent.delete_sessions(ids=["0" * 32])
    assert e.value.code == 404
    assert [s.id for s in agent.list_sessions()] == [kept.id]


# ---------------------------------------------------------------------- Session.ask
def test_ask_without_stream(agent, fake_llm):
    session = agent.create_session()
    question = f"What is a cairn, {unique('q')}?"
    message = session.ask(question, stream=False)
    assert isinstance(message, Message)
    assert message.content == f"Echo: {question}"
    assert (message.role, message.session_id) == ("assistant", session.id)
    assert message.id and len(message.id) == 32
    assert message.reference == []  # nothing retrieved
    assert message.trace is None  # not asked for
    assert message.user_inputs is None
    assert list(message) == [message]  # ragflow_sdk loops over ask() even without streaming
    fake_llm.wait_for_call(question)
    stored = agent.get_session(session.id).message
    assert [(m["role"], m["content"]) for m in stored] == [
        ("assistant", PROLOGUE), ("user", question), ("assistant", f"Echo: {question}"),
    ]


def test_ask_with_stream_yields_the_full_text_so_far(agent):
    session = agent.create_session()
    question = f"please describe the harbour of {unique('town')} in some detail"
    messages = list(session.ask(question, stream=True))
    assert all(isinstance(m, Message) for m in messages)
    # One Message per `message` event (the service coalesces a fast model's tokens into ~30 ms deltas),
    # then one at message_end (the reference) and a last one at workflow_finished.
    assert [m.event for m in messages][-2:] == ["message_end", "workflow_finished"]
    assert {m.event for m in messages[:-2]} == {"message"}
    for before, after in zip(messages, messages[1:]):
        assert after.content.startswith(before.content)  # cumulative
    assert messages[-1].content == f"Echo: {question}"
    assert messages[-1].event == "workflow_finished"
    assert "message_end" in [m.event for m in messages]
    assert isinstance(messages[-1].reference, list)  # the last one carries the reference
    assert all(m.session_id == session.id and m.id == messages[0].id for m in messages)
    assert messages[-1].usage is not None


def test_streamed_and_whole_answers_agree_and_turns_follow_each_other(agent, fake_llm):
    session = agent.create_session()
    first, second = f"first {unique('a')}", f"second {unique('b')}"
    whole = session.ask(first, stream=False).content
    streamed = list(session.ask(second, stream=True))[-1].content
    assert (whole, streamed) == (f"Echo: {first}", f"Echo: {second}")
    seen = fake_llm.wait_for_call(second)
    assert any(first in str(m["content"]) for m in seen)  # the session's history reached the model


def test_ask_inputs_to_a_task_begin(rag, fake_llm):
    agent = make_agent(rag, task_canvas())
    topic = unique("lighthouses")
    answer = agent.create_session().ask("", stream=False, inputs={"topic": {"value": topic, "type": "line"}})
    assert answer.content == f"Echo: Write about {topic}"
    other = unique("granite")
    streamed = list(agent.create_session().ask(stream=True, inputs={"topic": other}))  # a bare value is wrapped
    assert streamed[-1].content == f"Echo: Write about {other}"


def test_begin_values_given_to_create_session(rag):
    agent = make_agent(rag, task_canvas())
    topic = unique("tides")
    session = agent.create_session(topic=topic)
    assert session.ask(stream=False).content == f"Echo: Write about {topic}"


def test_return_trace(agent):
    session = agent.create_session()
    message = session.ask("trace me", stream=False, return_trace=True)
    assert message.content == "Echo: trace me"
    ids = [step["component_id"] for step in message.trace]
    assert {"begin", "LLM:Answer", "Message:Out"} <= set(ids)
    llm = next(s for s in message.trace if s["component_id"] == "LLM:Answer")
    assert llm["trace"][0]["outputs"]["content"] == "Echo: trace me"

    last = list(session.ask("trace the stream", stream=True, return_trace=True))[-1]
    assert {"begin", "LLM:Answer", "Message:Out"} <= {s["component_id"] for s in last.trace}
    assert list(session.ask("no trace", stream=True))[-1].trace is None


def test_a_paused_run_exposes_the_form_and_resumes_with_inputs(rag):
    agent = make_agent(rag, form_canvas())
    session = agent.create_session()
    paused = session.ask("hello", stream=False)
    assert paused.event == "user_inputs"
    assert set(paused.user_inputs.keys()) == {"city"}
    assert paused.tips == "Which city?"
    done = session.ask(stream=False, inputs={"city": {"value": "Lisbon"}})
    assert done.content == "You chose Lisbon."
    assert done.user_inputs is None

    streamed = agent.create_session()
    paused = list(streamed.ask("hello", stream=True))[-1]
    assert (paused.event, set(paused.user_inputs.keys()), paused.tips) == ("user_inputs", {"city"}, "Which city?")
    assert list(streamed.ask(stream=True, inputs={"city": "Porto"}))[-1].content == "You chose Porto."


def test_a_run_failing_on_its_configuration_raises_400_naming_the_component(rag):
    agent = make_agent(rag, llm_canvas(llm={"llm_id": "no-such-model@OpenAI-API-Compatible"}))
    session = agent.create_session()
    with pytest.raises(CairnError) as e:
        session.ask("fail", stream=False)
    assert e.value.code == 400
    assert "LLM:Answer" in e.value.message
    with pytest.raises(CairnError) as e:
        list(session.ask("fail again", stream=True))
    assert e.value.code == 400


def test_ask_in_an_unknown_session_is_404(rag, agent):
    ghost = Session(rag, {"id": "0" * 32, "agent_id": agent.id})
    with pytest.raises(CairnError) as e:
        ghost.ask("anyone?", stream=False)
    assert e.value.code == 404
    with pytest.raises(CairnError) as e:
        ghost.ask("anyone?", stream=True)  # raised at the call, not while iterating
    assert e.value.code == 404


# ---------------------------------------------------------------------- running turns: 409 and cancel
def test_cancel_without_a_running_turn_is_false(agent):
    assert agent.create_session().cancel() is False


def test_a_second_turn_while_one_runs_is_409_and_cancel_stops_it(rag):
    agent = make_agent(rag, slow_canvas())
    session = agent.create_session()
    stream = session.ask("30000", stream=True)  # busy for 30 s
    events: list[Message] = []
    failure: list[BaseException] = []

    def read() -> None:
        try:
            events.extend(stream)
        except BaseException as err:  # noqa: BLE001 - reported below
            failure.append(err)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.2)
    with pytest.raises(CairnError) as e:
        session.ask("me too", stream=False)
    assert e.value.code == 409
    assert session.cancel() is True
    reader.join(timeout=60)
    assert not reader.is_alive()
    assert not any(SLOW_DONE in m.content for m in events)  # the run stopped before its answer
    # Once its stream ended, the session takes a new turn at once (no 409 while the stopped workflow closes).
    assert session.ask("0", stream=False).content == SLOW_DONE


# ---------------------------------------------------------------------- tenants
def test_another_workspace_cannot_see_or_use_the_agent(rag, agent, new_account):
    stranger = new_account().client
    session = agent.create_session()
    assert agent.id not in [a.id for a in stranger.list_agents()]
    assert stranger.list_agents(id=agent.id) == []
    for call in (
        lambda: stranger.get_agent(agent.id),
        lambda: stranger.update_agent(agent.id, title=unique("taken")),
        lambda: stranger.delete_agent(agent.id),
        lambda: Agent(stranger, {"id": agent.id}).create_session(),
        lambda: Agent(stranger, {"id": agent.id}).list_sessions(),
        lambda: Agent(stranger, {"id": agent.id}).get_session(session.id),
        lambda: Agent(stranger, {"id": agent.id}).delete_sessions(ids=[session.id]),
        lambda: Session(stranger, {"id": session.id, "agent_id": agent.id}).ask("hi", stream=False),
        lambda: Session(stranger, {"id": session.id, "agent_id": agent.id}).cancel(),
    ):
        with pytest.raises(CairnError) as e:
            call()
        assert e.value.code == 404
    assert rag.get_agent(agent.id).title == agent.title  # untouched
    assert [s.id for s in agent.list_sessions()] == [session.id]
