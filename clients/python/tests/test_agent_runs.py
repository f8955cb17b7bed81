"""Agent run records and replay through the client: ``Session.list_runs``, ``get_run``, ``run_value``,
``replay`` and ``Agent.logs`` (docs/agents.md, "Runs and replay"), against the live Cairn of conftest
whose default chat model is the fake (``Echo: <last user message>``)."""

from __future__ import annotations

import pytest

from cairn import CairnError, Message
from support import unique
from test_agents import canvas


def two_llm_canvas() -> dict:
    """Begin → LLM:Draft → LLM:Polish → Message:Out."""
    def node(name: str, params: dict, down: list[str]) -> dict:
        return {"obj": {"component_name": name, "params": params}, "downstream": down, "upstream": []}
    return canvas({
        "begin": node("Begin", {"mode": "conversational", "prologue": "Hi."}, ["LLM:Draft"]),
        "LLM:Draft": node("LLM", {"sys_prompt": "Draft.", "prompts": [{"role": "user", "content": "{sys.query}"}]}, ["LLM:Polish"]),
        "LLM:Polish": node("LLM", {"sys_prompt": "Polish.", "prompts": [{"role": "user", "content": "Polish: {LLM:Draft@content}"}]}, ["Message:Out"]),
        "Message:Out": node("Message", {"content": ["{LLM:Polish@content}"]}, []),
    })


@pytest.fixture(scope="module")
def rag(new_account, setup_fake_models):
    acc = new_account()
    setup_fake_models(acc.client)
    return acc.client


def test_list_runs_shows_each_component_and_replay_reuses_the_first_llm(rag, fake_llm):
    agent = rag.create_agent(title=unique("runs"), dsl=two_llm_canvas())
    session = agent.create_session()
    word = unique("pebble")
    answer = session.ask(word, stream=False)
    assert answer.content == f"Echo: Polish: Echo: {word}"

    [run] = session.list_runs()
    assert run["status"] == "finished"
    assert [s["component_id"] for s in run["steps"]] == ["begin", "LLM:Draft", "LLM:Polish", "Message:Out"]
    assert run["steps"][1]["outputs"]["content"] == f"Echo: {word}"
    assert session.get_run(run["id"])["id"] == run["id"]

    calls_before = len(fake_llm.settled_calls())
    messages = list(session.replay(run["id"], "LLM:Polish"))
    assert all(isinstance(m, Message) for m in messages)
    assert messages[-1].content == f"Echo: Polish: Echo: {word}"
    assert len(fake_llm.settled_calls()) - calls_before == 1, "only LLM:Polish asked the model"

    newest = session.list_runs()[0]
    assert (newest["trigger"], newest["replay_of"], newest["from_component"]) == ("replay", run["id"], "LLM:Polish")
    assert [s["reused"] for s in newest["steps"]] == [False, True, False, False]
    assert agent.logs(run["id"]) == {}


def test_replay_from_a_component_that_did_not_run_raises_400(rag):
    agent = rag.create_agent(title=unique("runs"), dsl=two_llm_canvas())
    session = agent.create_session()
    session.ask("hello", stream=False)
    [run] = session.list_runs()
    with pytest.raises(CairnError) as e:
        list(session.replay(run["id"], "LLM:Nowhere"))
    assert e.value.code == 400
    assert "LLM:Nowhere" in e.value.message
