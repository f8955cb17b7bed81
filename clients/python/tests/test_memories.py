"""Memories through the client: spec "Memory", "Memory message", the Memories operations table, "States and
transitions" (forget, status), Limits and Authentication rule 4; issue 12 item 6.

Every test runs against the live Cairn of conftest, in a workspace of its own whose models are the fake
OpenAI-compatible server's: `fake-embed` (a hashed bag of words, 64 dimensions, so texts sharing words are
similar) and `fake-chat`, which answers `Echo: ...` unless a test scripts an extraction answer for a word of
its own conversation (`fake_llm.script`).
"""

from __future__ import annotations

import json
import time

import pytest

from cairn import CairnError, Client, Memory, MessagesAdded
from support import unique

DEFAULT_MEMORY_SIZE = 5 * 1024 * 1024
MAX_MEMORY_SIZE = 10 * 1024 * 1024
DIMS = 64  # the fake embedding model's dimensions


# ---------------------------------------------------------------------- fixtures and helpers
@pytest.fixture(scope="module")
def account(new_account, setup_fake_models):
    """A workspace of its own with the fake's chat and embedding models."""
    acc = new_account()
    acc.models = setup_fake_models(acc.client)
    return acc


@pytest.fixture(scope="module")
def rag(account) -> Client:
    return account.client


@pytest.fixture(scope="module")
def models(account):
    return account.models


@pytest.fixture
def make_memory(rag, models):
    """Creates memories (raw only unless told), deleted afterwards."""
    made: list[Memory] = []

    def make(memory_type=("raw",), name=None, client: Client | None = None, **fields) -> Memory:
        c = client or rag
        m = c.create_memory(name or unique("mem"), list(memory_type), models.embedding_model, models.llm_id)
        if fields:
            m.update(fields)
        made.append((c, m))
        return m

    yield make
    for c, m in made:
        try:
            c.delete_memory(m.id)
        except CairnError:
            pass


def add(rag: Client, memory: Memory, user_input: str, agent_response: str = "Noted.", agent_id: str = "agent-1",
        session_id: str = "session-1", **kwargs) -> int:
    """Adds one turn to one memory; returns the raw message id."""
    res = rag.add_message([memory.id], agent_id, session_id, user_input, agent_response, **kwargs)
    assert res == "All add to task."
    return res.message_ids[memory.id]


def raw_content(user_input: str, agent_response: str) -> str:
    return f"User Input: {user_input}\nAgent Response: {agent_response}"


def size_of(user_input: str, agent_response: str) -> int:
    """Spec "Memory size accounting": content bytes plus dimensions × 8."""
    return len(raw_content(user_input, agent_response).encode("utf-8")) + DIMS * 8


def listed(memory: Memory, **kwargs) -> list[dict]:
    return memory.list_memory_messages(**kwargs)["messages"]["message_list"]


def wait_task(memory: Memory, message_id: int, timeout: float = 60) -> dict:
    """Polls the listing until the raw message's extraction task is done (1) or failed (-1); returns the message."""
    deadline = time.monotonic() + timeout
    while True:
        found = [m for m in listed(memory, page_size=100) if m["message_id"] == message_id]
        if found and found[0]["task"]["progress"] in (1, -1):
            return found[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"the task of message {message_id} did not finish: {found}")
        time.sleep(0.2)


def ids_of(messages: list[dict]) -> list[int]:
    return [m["message_id"] for m in messages]


def assert_error(err: pytest.ExceptionInfo, code: int, *needles: str) -> None:
    assert err.value.code == code, (err.value.code, err.value.message)
    for needle in needles:
        assert needle in err.value.message, err.value.message


# ---------------------------------------------------------------------- create_memory
def test_create_memory_returns_a_memory_with_the_spec_defaults(rag, models, make_memory):
    name = unique("Trips")
    m = make_memory(["raw", "semantic"], name=name)
    assert isinstance(m, Memory) and m.id
    assert (m.name, m.memory_type, m.embd_id, m.llm_id) == (name, ["raw", "semantic"], models.embedding_model, models.llm_id)
    assert (m.permission, m.permissions, m.memory_size, m.forgetting_policy, m.storage_type) == ("me", "me", DEFAULT_MEMORY_SIZE, "FIFO", "table")
    assert 0 <= m.temperature <= 1
    assert m.description is None
    # The system prompt is assembled from the types, with the fixed parts.
    assert "## OUTPUT REQUIREMENTS" in m.system_prompt and "## OUTPUT FORMAT" in m.system_prompt
    assert "semantic" in m.system_prompt


def test_create_memory_with_a_taken_name_gets_a_suffix(make_memory):
    name = unique("dup")
    first = make_memory(name=name)
    second = make_memory(name=name.upper())
    assert first.name == name
    assert second.name == f"{name.upper()}(1)"


@pytest.mark.parametrize("kwargs,needle", [
    ({"name": "   "}, "name"),
    ({"name": "x" * 129}, "128"),
    ({"name": "emoji \U0001F600"}, "BMP"),
    ({"memory_type": []}, "Memory type"),
    ({"memory_type": ["raw", "dreams"]}, "dreams"),
    ({"embd_id": "no-such-model@Nowhere"}, "embd_id"),
    ({"llm_id": "fake-embed@OpenAI-API-Compatible"}, "llm_id"),  # an embedding model is not a chat model
])
def test_create_memory_rejects_invalid_fields(rag, models, kwargs, needle):
    args = {"name": unique("bad"), "memory_type": ["raw"], "embd_id": models.embedding_model, "llm_id": models.llm_id, **kwargs}
    with pytest.raises(CairnError) as err:
        rag.create_memory(**args)
    assert_error(err, 400, needle)


# ---------------------------------------------------------------------- Memory.update / get_config
def test_update_changes_the_given_fields_and_returns_the_memory(make_memory):
    m = make_memory()
    new_name = unique("renamed")
    out = m.update({"name": new_name, "description": "kept for trips", "memory_size": 4096, "temperature": 0.2,
                    "permission": "team", "user_prompt": "Be terse."})
    assert out is m
    assert (m.name, m.description, m.memory_size, m.temperature, m.permission, m.user_prompt) == (
        new_name, "kept for trips", 4096, 0.2, "team", "Be terse.")
    config = m.get_config()
    assert isinstance(config, Memory) and config.id == m.id
    assert (config.name, config.description, config.memory_size, config.temperature, config.permission) == (
        new_name, "kept for trips", 4096, 0.2, "team")
    assert config.memory_type == ["raw"] and config.forgetting_policy == "FIFO"


@pytest.mark.parametrize("patch,needle", [
    ({"memory_size": 0}, "Memory size"),
    ({"memory_size": MAX_MEMORY_SIZE + 1}, "Memory size"),
    ({"temperature": 1.5}, "Temperature"),
    ({"permission": "everyone"}, "permission"),
    ({"forgetting_policy": "LRU"}, "Forgetting policy"),
    ({"avatar": "a" * 65536}, "avatar"),
])
def test_update_rejects_values_out_of_range(make_memory, patch, needle):
    m = make_memory()
    with pytest.raises(CairnError) as err:
        m.update(patch)
    assert_error(err, 400, needle)


def test_update_keeps_the_fixed_parts_of_the_system_prompt(make_memory):
    m = make_memory(["raw", "semantic"])
    custom = m.system_prompt.replace("Extract only these types", "Please extract only these types")
    assert m.update({"system_prompt": custom}).system_prompt == custom
    broken = custom.replace("Give at most", "Give as many as you like, at most")
    with pytest.raises(CairnError) as err:
        m.update({"system_prompt": broken})
    assert_error(err, 400, "OUTPUT REQUIREMENTS")
    assert m.get_config().system_prompt == custom


def test_update_needs_a_dict(make_memory):
    with pytest.raises(CairnError) as err:
        make_memory().update("name=x")
    assert err.value.code == 400


def test_embd_id_changes_only_while_the_memory_is_empty(rag, make_memory, models):
    builtin = "sentence-transformers/all-MiniLM-L6-v2@Builtin"
    empty = make_memory()
    assert empty.update({"embd_id": builtin}).embd_id == builtin
    assert empty.update({"embd_id": models.embedding_model}).embd_id == models.embedding_model
    full = make_memory()
    add(rag, full, "something to keep")
    with pytest.raises(CairnError) as err:
        full.update({"embd_id": builtin})
    assert_error(err, 400, "embd_id", "isn't empty")
    assert full.get_config().embd_id == models.embedding_model


# ---------------------------------------------------------------------- list_memory / delete_memory
def test_list_memory_pages_filters_and_counts(new_account, setup_fake_models, make_memory):
    owner = new_account()
    setup_fake_models(owner.client)
    c = owner.client
    raw = make_memory(["raw"], name=unique("alpha"), client=c)
    sem = make_memory(["raw", "semantic"], name=unique("beta"), client=c)
    epi = make_memory(["raw", "episodic"], name=unique("gamma"), client=c)

    everything = c.list_memory()  # page 1, page_size 50
    assert everything["total_count"] == 3
    assert all(isinstance(m, Memory) for m in everything["memory_list"])
    assert [m.id for m in everything["memory_list"]] == [epi.id, sem.id, raw.id]  # newest first

    page = c.list_memory(page=2, page_size=2)
    assert page["total_count"] == 3 and [m.id for m in page["memory_list"]] == [raw.id]
    assert [m.id for m in c.list_memory(memory_type="semantic")["memory_list"]] == [sem.id]
    assert {m.id for m in c.list_memory(memory_type=["semantic", "episodic"])["memory_list"]} == {sem.id, epi.id}
    assert [m.id for m in c.list_memory(keywords=beta_part(sem.name))["memory_list"]] == [sem.id]
    assert c.list_memory(storage_type="table")["total_count"] == 3
    assert c.list_memory(tenant_id=owner.tenant_id)["total_count"] == 3
    assert c.list_memory(tenant_id=[owner.tenant_id])["total_count"] == 3
    assert c.list_memory(tenant_id="someone-else")["total_count"] == 0


def beta_part(name: str) -> str:
    """A case-changed part of the name (keywords are a fuzzy, case-insensitive search)."""
    return name[:7].upper()


def test_delete_memory_removes_it_with_its_messages(rag, make_memory):
    m = make_memory()
    message_id = add(rag, m, "a turn that goes away")
    assert rag.delete_memory(m.id) is None
    assert m.id not in [x.id for x in rag.list_memory(page_size=100)["memory_list"]]
    with pytest.raises(CairnError) as err:
        m.get_config()
    assert_error(err, 404)
    with pytest.raises(CairnError) as err:
        m.get_message_content(message_id)
    assert_error(err, 404)
    with pytest.raises(CairnError) as err:
        rag.delete_memory(m.id)
    assert_error(err, 404)


# ---------------------------------------------------------------------- add_message / list / content
def test_add_message_stores_the_turn_at_once_for_the_caller(account, rag, make_memory):
    m1, m2 = make_memory(), make_memory()
    res = rag.add_message([m1.id, m2.id], "agent-7", "session-7", "Where is the lighthouse?", "On the north cape.",
                          user_id="somebody-else")
    assert isinstance(res, MessagesAdded) and isinstance(res, str)
    assert res == "All add to task."
    assert set(res.message_ids) == {m1.id, m2.id}
    assert all(isinstance(i, int) for i in res.message_ids.values())

    for m in (m1, m2):
        message_id = res.message_ids[m.id]
        got = m.get_message_content(message_id)
        assert got["content"] == raw_content("Where is the lighthouse?", "On the north cape.")
        assert (got["message_id"], got["message_type"], got["source_id"], got["memory_id"]) == (message_id, "raw", 0, m.id)
        assert (got["agent_id"], got["session_id"], got["status"], got["forget_at"]) == ("agent-7", "session-7", True, None)
        # Authentication rule 4: the message's user is the caller, whatever the body said.
        assert got["user_id"] == account.user_id
        assert isinstance(got["content_embed"], list) and len(got["content_embed"]) == DIMS
        assert abs(sum(x * x for x in got["content_embed"]) - 1) < 1e-6
        assert isinstance(got["valid_at"], int) and abs(got["valid_at"] - time.time()) < 120

    # Searchable as soon as the call returned.
    found = rag.search_message("lighthouse cape", [m1.id])
    assert ids_of(found) == [res.message_ids[m1.id]]
    # Filtering by user id: the caller's id finds it, the id the body claimed does not.
    assert ids_of(rag.search_message("lighthouse cape", [m1.id], user_id=account.user_id)) == [res.message_ids[m1.id]]
    assert rag.search_message("lighthouse cape", [m1.id], user_id="somebody-else") == []


def test_add_message_is_all_or_nothing(rag, make_memory):
    m = make_memory()
    with pytest.raises(CairnError) as err:
        rag.add_message([m.id, "no-such-memory"], "a", "s", "lost turn", "never stored")
    assert_error(err, 404)
    assert listed(m) == []


def test_add_message_larger_than_the_memory_is_a_400(rag, make_memory):
    m = make_memory(memory_size=600)
    with pytest.raises(CairnError) as err:
        rag.add_message([m.id], "a", "s", "x" * 200, "y" * 200)
    assert_error(err, 400, "bytes", "memory_size 600")
    assert listed(m) == []


def test_list_memory_messages_shape_paging_and_filters(rag, make_memory):
    m = make_memory()
    first = add(rag, m, "first turn", agent_id="agent-a", session_id="trip-oslo")
    second = add(rag, m, "second turn", agent_id="agent-b", session_id="trip-rome")
    third = add(rag, m, "third turn", agent_id="agent-a", session_id="work-call")
    wait_task(m, third)

    out = m.list_memory_messages()  # page 1, page_size 50
    assert set(out) == {"messages", "storage_type"} and out["storage_type"] == "table"
    assert out["messages"]["total_count"] == 3
    items = out["messages"]["message_list"]
    assert ids_of(items) == [third, second, first]  # newest first
    one = items[0]
    assert {"message_id", "message_type", "source_id", "memory_id", "user_id", "agent_id", "agent_name", "session_id",
            "valid_at", "invalid_at", "forget_at", "status", "task", "extract"} <= set(one)
    assert one["extract"] == [] and one["task"]["progress"] == 1  # raw only: done at once
    assert "content" not in one  # as RAGFlow: the content route has it

    page = m.list_memory_messages(page=2, page_size=2)["messages"]
    assert page["total_count"] == 3 and ids_of(page["message_list"]) == [first]
    assert ids_of(listed(m, agent_id="agent-a")) == [third, first]
    assert ids_of(listed(m, agent_id=["agent-a", "agent-b"])) == [third, second, first]
    assert ids_of(listed(m, keywords="trip")) == [second, first]
    assert ids_of(listed(m, keywords="rome")) == [second]


# ---------------------------------------------------------------------- search / recent / status / forget
def test_search_message_ranks_filters_and_scores(rag, make_memory):
    m = make_memory()
    boat = add(rag, m, "I keep my sailing boat in the harbour of Bergen", agent_id="agent-a", session_id="s1")
    bread = add(rag, m, "My favourite bread is sourdough rye", agent_id="agent-b", session_id="s2")
    add(rag, m, "The meeting moved to Thursday afternoon", agent_id="agent-a", session_id="s3")

    hits = rag.search_message("sailing boat harbour", [m.id])
    assert ids_of(hits) == [boat]
    hit = hits[0]
    assert hit["content"] == raw_content("I keep my sailing boat in the harbour of Bergen", "Noted.")
    for key in ("similarity", "term_similarity", "vector_similarity"):
        assert 0 <= hit[key] <= 1
    assert hit["similarity"] == pytest.approx(0.7 * hit["term_similarity"] + 0.3 * hit["vector_similarity"], abs=1e-6)
    # keywords_similarity_weight=0.5 weighs keywords and meaning equally.
    even = rag.search_message("sailing boat harbour", [m.id], keywords_similarity_weight=0.5)[0]
    assert even["similarity"] == pytest.approx(0.5 * even["term_similarity"] + 0.5 * even["vector_similarity"], abs=1e-6)

    assert ids_of(rag.search_message("sourdough bread", [m.id], agent_id="agent-b")) == [bread]
    assert rag.search_message("sourdough bread", [m.id], agent_id="agent-a") == []
    assert rag.search_message("sourdough bread", [m.id], session_id="s1") == []
    assert ids_of(rag.search_message("sourdough bread", [m.id], session_id="s2")) == [bread]
    # Every message scores something against "noted"; top_n and the threshold cut.
    assert len(rag.search_message("noted", [m.id], similarity_threshold=0)) == 3
    assert len(rag.search_message("noted", [m.id], similarity_threshold=0, top_n=2)) == 2
    assert rag.search_message("noted", [m.id], similarity_threshold=1.0) == []
    with pytest.raises(CairnError) as err:
        rag.search_message("noted", [m.id], similarity_threshold=1.5)
    assert_error(err, 400)


def test_search_message_over_several_memories(rag, make_memory):
    m1, m2 = make_memory(), make_memory()
    a = add(rag, m1, "granite quarry north")
    b = add(rag, m2, "granite quarry south")
    assert set(ids_of(rag.search_message("granite quarry", [m1.id, m2.id]))) == {a, b}
    assert ids_of(rag.search_message("granite quarry", m2.id)) == [b]  # a single id is accepted too


def test_disabled_messages_are_not_searched_but_listed_and_recent(rag, make_memory):
    m = make_memory()
    kept = add(rag, m, "kayak paddle spray deck")
    off = add(rag, m, "kayak trailer hitch")
    assert m.update_message_status(off, False) is True
    assert ids_of(rag.search_message("kayak", [m.id])) == [kept]
    assert m.get_message_content(off)["status"] is False
    assert {x["message_id"]: x["status"] for x in listed(m)} == {kept: True, off: False}
    assert off in ids_of(rag.get_recent_messages([m.id]))  # RAGFlow: recent includes disabled messages
    assert m.update_message_status(off, True) is True
    assert set(ids_of(rag.search_message("kayak", [m.id]))) == {kept, off}
    with pytest.raises(CairnError) as err:
        m.update_message_status(off, "no")
    assert err.value.code == 400


def test_a_forgotten_message_is_readable_and_listed_but_never_retrieved(rag, make_memory):
    m = make_memory()
    kept = add(rag, m, "glacier crampons ice axe")
    gone = add(rag, m, "glacier rope team")
    assert m.forget_message(gone) is True

    content = m.get_message_content(gone)
    assert content["content"] == raw_content("glacier rope team", "Noted.")
    assert isinstance(content["forget_at"], int) and abs(content["forget_at"] - time.time()) < 120
    assert gone in ids_of(listed(m))
    assert ids_of(rag.search_message("glacier rope team", [m.id], similarity_threshold=0)) == [kept]
    assert ids_of(rag.get_recent_messages([m.id])) == [kept]
    # Forgetting again keeps the first forget_at.
    assert m.forget_message(gone) is True
    assert m.get_message_content(gone)["forget_at"] == content["forget_at"]


def test_get_recent_messages_newest_first_with_filters(rag, make_memory):
    m1, m2 = make_memory(), make_memory()
    ids = []
    for i in range(12):
        target = m1 if i % 2 == 0 else m2
        ids.append(add(rag, target, f"turn number {i}", agent_id=f"agent-{i % 3}", session_id=f"session-{i % 4}"))
    recent = rag.get_recent_messages([m1.id, m2.id])  # limit 10
    assert ids_of(recent) == list(reversed(ids))[:10]
    assert recent[0]["content"] == raw_content("turn number 11", "Noted.")
    assert ids_of(rag.get_recent_messages([m1.id, m2.id], limit=3)) == list(reversed(ids))[:3]
    assert ids_of(rag.get_recent_messages([m1.id])) == list(reversed(ids[0::2]))
    assert ids_of(rag.get_recent_messages([m1.id, m2.id], agent_id="agent-1")) == [ids[i] for i in (10, 7, 4, 1)]
    assert ids_of(rag.get_recent_messages([m1.id, m2.id], session_id="session-3")) == [ids[i] for i in (11, 7, 3)]
    assert ids_of(rag.get_recent_messages([m1.id, m2.id], agent_id="agent-1", session_id="session-0")) == [ids[4]]


def test_a_memory_on_the_builtin_embedding_model(rag, models):
    """The README's example: the built-in embedding model needs no provider."""
    m = rag.create_memory(unique("trips"), ["raw"], "BAAI/bge-small-en-v1.5@Builtin", models.llm_id)
    try:
        rag.add_message([m.id], agent_id="guide", session_id="s1", user_input="I am walking the Cairngorms in May.",
                        agent_response="Pack for snow.")
        rag.add_message([m.id], agent_id="guide", session_id="s1", user_input="My sister bakes bread.",
                        agent_response="Lovely.")
        hits = rag.search_message("Where is the user walking?", [m.id])
        best = max(hits, key=lambda h: h["similarity"])
        assert "Cairngorms" in best["content"]
        assert len(m.get_message_content(best["message_id"])["content_embed"]) == 384
    finally:
        rag.delete_memory(m.id)


# ---------------------------------------------------------------------- FIFO
def test_fifo_removes_forgotten_messages_first_then_the_oldest(rag, make_memory):
    turns = [(f"fifo turn {i} " + "w" * 40, "ok") for i in range(6)]
    one = size_of(*turns[0])
    assert all(size_of(*t) == one for t in turns)
    m = make_memory(memory_size=3 * one)  # room for exactly three turns
    a, b, c = (add(rag, m, *t) for t in turns[:3])
    assert ids_of(listed(m)) == [c, b, a]

    # Full: forgetting b makes it the first to go, although a is older.
    m.forget_message(b)
    d = add(rag, m, *turns[3])
    assert ids_of(listed(m)) == [d, c, a]
    with pytest.raises(CairnError) as err:
        m.get_message_content(b)
    assert_error(err, 404)

    # Nothing forgotten: the oldest goes.
    e = add(rag, m, *turns[4])
    assert ids_of(listed(m)) == [e, d, c]

    # Lowering memory_size applies FIFO at once; a forgotten newer message still goes before older ones.
    m.forget_message(e)
    m.update({"memory_size": 2 * one})
    assert ids_of(listed(m)) == [d, c]
    # Message ids are never reused.
    f = add(rag, m, *turns[5])
    assert f > e and ids_of(listed(m)) == [f, d]


# ---------------------------------------------------------------------- extraction
def test_extracted_items_appear_under_their_raw_message(rag, make_memory, fake_llm):
    m = make_memory(["raw", "semantic", "episodic"])
    word = unique("teal").replace("-", "")
    answer = json.dumps({
        "semantic": [{"content": f"The user's favourite colour is {word}.", "valid_at": None, "invalid_at": None}],
        "episodic": [{"content": f"The user painted the boat {word} on 2 January 2025.", "valid_at": "2025-01-02T03:04:05Z",
                      "invalid_at": None}],
        "procedural": [{"content": "Not a type of this memory: dropped."}],
    })
    fake_llm.script(word, f"```json\n{answer}\n```")
    try:
        raw = add(rag, m, f"I painted my boat {word} yesterday, it is my favourite colour.", "Lovely!")
        done = wait_task(m, raw)
    finally:
        fake_llm.unscript(word)
    assert done["task"]["progress"] == 1, done["task"]
    assert "2 item" in done["task"]["progress_msg"]

    # The model was asked with the memory's prompts: system prompt, then the conversation.
    messages = fake_llm.wait_for_call(word)
    assert messages[0]["role"] == "system" and messages[0]["content"] == m.system_prompt
    assert raw_content(f"I painted my boat {word} yesterday, it is my favourite colour.", "Lovely!") in messages[-1]["content"]

    out = m.list_memory_messages()["messages"]
    assert out["total_count"] == 1  # items are nested, not listed on their own
    [top] = out["message_list"]
    assert top["message_id"] == raw and top["message_type"] == "raw"
    extract = {x["message_type"]: x for x in top["extract"]}
    assert set(extract) == {"semantic", "episodic"}
    for item in extract.values():
        assert item["source_id"] == raw and item["memory_id"] == m.id and item["session_id"] == "session-1"
    assert extract["episodic"]["valid_at"] == 1735787045
    assert extract["semantic"]["valid_at"] == top["valid_at"]  # falls back to the conversation time
    semantic = m.get_message_content(extract["semantic"]["message_id"])
    assert semantic["content"] == f"The user's favourite colour is {word}." and len(semantic["content_embed"]) == DIMS

    # Items are searchable and recent like raw messages.
    found = rag.search_message(f"favourite colour {word}", [m.id], similarity_threshold=0.3)
    assert extract["semantic"]["message_id"] in ids_of(found)
    assert set(ids_of(rag.get_recent_messages([m.id]))) == {raw, *(x["message_id"] for x in extract.values())}


def test_an_invalid_extraction_answer_fails_the_task_and_keeps_the_raw_message(rag, make_memory, fake_llm):
    m = make_memory(["raw", "semantic"])
    word = unique("nonsense").replace("-", "")
    fake_llm.script(word, "I would rather not answer in JSON today.")
    try:
        raw = add(rag, m, f"remember {word} please")
        done = wait_task(m, raw)
    finally:
        fake_llm.unscript(word)
    assert done["task"]["progress"] == -1
    assert "not valid JSON" in done["task"]["progress_msg"]
    assert done["extract"] == []
    assert ids_of(rag.search_message(word, [m.id])) == [raw]


# ---------------------------------------------------------------------- errors and isolation
def test_missing_messages_and_bad_ids_raise_with_code_and_message(rag, make_memory):
    m = make_memory()
    for call in (lambda: m.get_message_content(987654321), lambda: m.forget_message(987654321),
                 lambda: m.update_message_status(987654321, False)):
        with pytest.raises(CairnError) as err:
            call()
        assert_error(err, 404, "987654321")
    with pytest.raises(CairnError) as err:
        m.get_message_content("not-a-number")
    assert err.value.code == 400
    with pytest.raises(CairnError) as err:
        Memory(rag, {"id": "no-such-memory"}).get_config()
    assert_error(err, 404, "no-such-memory")
    with pytest.raises(CairnError) as err:
        rag.get_recent_messages([])
    assert err.value.code == 400


def test_another_tenant_gets_404_on_every_operation(rag, make_memory, new_account):
    m = make_memory()
    message_id = add(rag, m, "private thoughts about tides")
    stranger = new_account().client
    theirs = Memory(stranger, {"id": m.id})
    calls = {
        "get_config": theirs.get_config,
        "update": lambda: theirs.update({"description": "mine now"}),
        "list_memory_messages": theirs.list_memory_messages,
        "get_message_content": lambda: theirs.get_message_content(message_id),
        "forget_message": lambda: theirs.forget_message(message_id),
        "update_message_status": lambda: theirs.update_message_status(message_id, False),
        "add_message": lambda: stranger.add_message([m.id], "a", "s", "intrusion", "no"),
        "search_message": lambda: stranger.search_message("tides", [m.id]),
        "get_recent_messages": lambda: stranger.get_recent_messages([m.id]),
        "delete_memory": lambda: stranger.delete_memory(m.id),
    }
    for name, call in calls.items():
        with pytest.raises(CairnError) as err:
            call()
        assert err.value.code == 404, (name, err.value.code, err.value.message)
    assert stranger.list_memory()["total_count"] == 0
    # Nothing changed for the owner.
    config = m.get_config()
    assert config.description is None
    content = m.get_message_content(message_id)
    assert (content["status"], content["forget_at"]) == (True, None)
    assert ids_of(listed(m)) == [message_id]


def test_team_memories_are_managed_by_members(account, rag, make_memory, new_account):
    member = new_account()
    res = rag.post(f"/tenants/{account.tenant_id}/users", json={"email": member.email})
    assert res.json().get("code") == 0, res.text
    shared = make_memory(permission="team")
    private = make_memory()
    message_id = member.client.add_message([shared.id], "a", "s", "member's note on anchors", "ok").message_ids[shared.id]
    content = Memory(member.client, {"id": shared.id}).get_message_content(message_id)
    assert content["user_id"] == member.user_id  # the member's own id, not the owner's
    with pytest.raises(CairnError) as err:
        Memory(member.client, {"id": private.id}).get_config()
    assert_error(err, 403)


# ---------------------------------------------------------------------- dates, types and source turns (Cairn extensions)
def test_session_time_date_range_types_and_source_turns(rag, make_memory, fake_llm):
    m = make_memory(["raw", "semantic"])
    word = unique("heron").replace("-", "")
    old = add(rag, m, f"I saw a {word} by the canal", valid_at="2024-03-05T10:00:00Z")
    answer = json.dumps({"semantic": [{"content": f"The user photographs {word}s.", "valid_at": None, "invalid_at": None}],
                         "episodic": [], "procedural": []})
    fake_llm.script(f"photographed the {word}", answer)
    try:
        new = add(rag, m, f"I photographed the {word} again", valid_at=1717200000)  # 2024-06-01
        wait_task(m, new)
    finally:
        fake_llm.unscript(f"photographed the {word}")
    hits = rag.search_message(word, [m.id], similarity_threshold=0)
    by_id = {h["message_id"]: h for h in hits}
    assert by_id[old]["valid_date"] == "2024-03-05T10:00:00.000Z"
    assert by_id[new]["valid_at"] == 1717200000
    march = rag.search_message(word, [m.id], similarity_threshold=0, valid_since="2024-03-01", valid_until="2024-03-31")
    assert ids_of(march) == [old]
    items = rag.search_message(word, [m.id], similarity_threshold=0, message_type=["semantic"], include_source=True)
    assert [h["message_type"] for h in items] == ["semantic"]
    assert items[0]["source"]["message_id"] == new and items[0]["source"]["valid_at"] == 1717200000
    with pytest.raises(CairnError) as err:
        rag.search_message(word, [m.id], valid_since="last spring")
    assert err.value.code == 400 and "valid_since" in str(err.value)
