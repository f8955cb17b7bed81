"""Chat assistants: spec "Chat (chat assistant)", "Chat assistants", "Prompt variables for chat assistants"."""

from __future__ import annotations

import time

import pytest

from cairn import CairnError, Chat
from support import unique

NO_KNOWLEDGE = {"system": "You are a concise assistant.", "parameters": [], "empty_response": ""}


@pytest.fixture
def make_chat(client, llm_id):
    made: list[str] = []

    def make(**kwargs) -> Chat:
        kwargs.setdefault("name", unique("chat"))
        kwargs.setdefault("llm_id", llm_id)
        chat = client.create_chat(**kwargs)
        made.append(chat.id)
        return chat

    yield make
    for chat_id in made:
        try:
            client.delete_chats(ids=[chat_id])
        except CairnError:
            pass


def dataset_with_chunk(client, name: str):
    """A dataset holding one chunk, added directly: a chat refuses a dataset with no parsed file (as RAGFlow)."""
    kb = client.create_dataset(name=name)
    doc = kb.upload_documents([{"display_name": "note.txt", "blob": b"Granite cairns mark the trail."}])[0]
    doc.add_chunk(content="Granite cairns mark the trail.")
    return kb


@pytest.fixture
def own_client(fresh_client, setup_fake_models):
    """A client of a new workspace with the fake chat model as its default."""
    setup_fake_models(fresh_client)
    return fresh_client


# ---------------------------------------------------------------------- create_chat
def test_create_chat_gets_the_spec_defaults(make_chat, llm_id):
    name = unique("defaults")
    chat = make_chat(name=name)
    assert isinstance(chat, Chat)
    assert chat.id
    assert chat.name == name
    assert chat.icon == ""  # icon: default ""
    assert chat.dataset_ids == []  # default empty; an assistant without datasets is allowed
    assert chat.llm_id == llm_id
    s = chat.llm_setting
    assert (s.temperature, s.top_p, s.presence_penalty, s.frequency_penalty, s.max_token) == (0.1, 0.3, 0.4, 0.7, 512)
    p = chat.prompt_config
    assert isinstance(p.system, str)
    assert not p.get("empty_response")  # default none
    assert isinstance(p.prologue, str) and p.prologue  # default: a short greeting
    assert p.quote is True
    assert p.parameters == [{"key": "knowledge", "optional": True}]
    assert chat.similarity_threshold == 0.2
    assert chat.vector_similarity_weight == 0.3
    assert chat.top_n == 6
    assert chat.top_k == 1024
    assert not chat.rerank_id  # empty: vector cosine similarity ranks


def test_create_chat_without_llm_id_uses_the_default_chat_model(own_client):
    chat = own_client.create_chat(name=unique("default-model"))
    assert chat.llm_id.startswith("fake-chat@")  # the workspace chose the fake as its default


def test_a_new_workspace_chats_with_the_builtin_model(fresh_client):
    chat = fresh_client.create_chat(name=unique("builtin-model"))
    assert chat.llm_id == "SmolLM2-135M-Instruct@Builtin"  # until the workspace chooses another


def test_create_chat_with_every_parameter(client, make_chat, llm_id):
    kb = dataset_with_chunk(client, unique("chat-kb"))
    try:
        chat = make_chat(
            icon="iVBORw0KGgo=",
            dataset_ids=[kb.id],
            llm_setting={"temperature": 0.5, "top_p": 0.9, "presence_penalty": 0.1, "frequency_penalty": 0.2, "max_token": 256},
            prompt_config={
                "system": "Use this: {knowledge}",
                "empty_response": "Nothing found.",
                "prologue": "Hello!",
                "quote": False,
                "parameters": [{"key": "knowledge", "optional": False}],
            },
            similarity_threshold=0.4,
            vector_similarity_weight=0.6,
            top_n=3,
            top_k=256,
        )
        assert chat.icon == "iVBORw0KGgo="
        assert chat.dataset_ids == [kb.id]
        assert chat.llm_setting.temperature == 0.5
        assert chat.llm_setting.max_token == 256
        assert chat.prompt_config.system == "Use this: {knowledge}"
        assert chat.prompt_config.empty_response == "Nothing found."
        assert chat.prompt_config.prologue == "Hello!"
        assert chat.prompt_config.quote is False
        assert chat.prompt_config.parameters == [{"key": "knowledge", "optional": False}]
        assert (chat.similarity_threshold, chat.vector_similarity_weight, chat.top_n, chat.top_k) == (0.4, 0.6, 3, 256)
    finally:
        client.delete_datasets(ids=[kb.id])


def test_create_chat_name_is_required(client, llm_id):
    with pytest.raises(CairnError) as e:
        client.create_chat(name="", llm_id=llm_id)
    assert e.value.code == 400


def test_create_chat_with_an_unknown_llm_is_400(client):
    with pytest.raises(CairnError) as e:
        client.create_chat(name=unique("bad-llm"), llm_id="no-such-model@NoSuchFactory")
    assert e.value.code == 400


def test_create_chat_over_a_dataset_with_no_parsed_document_is_400(client, llm_id):
    kb = client.create_dataset(name=unique("unparsed"))
    try:
        with pytest.raises(CairnError) as e:
            client.create_chat(name=unique("over-nothing"), llm_id=llm_id, dataset_ids=[kb.id])
        assert e.value.code == 400
        assert f"The dataset {kb.id} doesn't own parsed file" in e.value.message
    finally:
        client.delete_datasets(ids=[kb.id])


def test_create_chat_with_an_unknown_knowledge_base_is_404(client, llm_id):
    with pytest.raises(CairnError) as e:
        client.create_chat(name=unique("bad-kb"), llm_id=llm_id, dataset_ids=["b" * 32])
    assert e.value.code == 404


# ---------------------------------------------------------------------- prompt variables
def test_a_variable_in_the_prompt_must_be_in_the_variable_list(client, llm_id):
    with pytest.raises(CairnError) as e:
        client.create_chat(name=unique("vars"), llm_id=llm_id, prompt_config={
            "system": "Answer for the city of {city}.",
            "parameters": [],
        })
    assert e.value.code == 400


def test_a_variable_in_the_list_must_be_in_the_prompt(client, llm_id):
    with pytest.raises(CairnError) as e:
        client.create_chat(name=unique("vars"), llm_id=llm_id, prompt_config={
            "system": "Answer briefly.",
            "parameters": [{"key": "city", "optional": False}],
        })
    assert e.value.code == 400


def test_a_variable_removed_from_the_list_must_be_removed_from_the_prompt(make_chat):
    chat = make_chat(prompt_config={"system": "Answer for the city of {city}.", "parameters": [{"key": "city", "optional": False}]})
    with pytest.raises(CairnError) as e:
        chat.update({"prompt_config": {"system": "Answer for the city of {city}.", "parameters": []}})
    assert e.value.code == 400


def test_a_chat_without_knowledge_may_drop_the_knowledge_variable(make_chat):
    chat = make_chat(prompt_config=NO_KNOWLEDGE)
    assert chat.prompt_config.parameters == []
    assert "{knowledge}" not in chat.prompt_config.system


# ---------------------------------------------------------------------- Chat.update
def test_update_changes_only_the_given_keys(client, make_chat):
    chat = make_chat(top_n=4, similarity_threshold=0.3)
    new_name = unique("renamed")
    chat.update({"name": new_name})
    again = client.get_chat(chat.id)
    assert again.name == new_name
    assert again.top_n == 4
    assert again.similarity_threshold == 0.3
    assert again.llm_setting == chat.llm_setting
    assert again.prompt_config == chat.prompt_config


def test_update_every_key(client, make_chat):
    chat = make_chat()
    kb = dataset_with_chunk(client, unique("attach"))
    try:
        chat.update({
            "icon": "iVBORw0KGgo=",
            "dataset_ids": [kb.id],  # datasets can be attached later
            "llm_setting": {"temperature": 0.9, "top_p": 0.5, "presence_penalty": 0.2, "frequency_penalty": 0.1, "max_token": 128},
            "prompt_config": {"system": "Context: {knowledge}", "parameters": [{"key": "knowledge", "optional": True}],
                              "prologue": "Hey", "quote": False, "empty_response": "No idea."},
            "similarity_threshold": 0.5,
            "vector_similarity_weight": 0.7,
            "top_n": 2,
            "top_k": 64,
        })
        again = client.get_chat(chat.id)
        assert again.icon == "iVBORw0KGgo="
        assert again.dataset_ids == [kb.id]
        assert again.llm_setting.temperature == 0.9
        assert again.llm_setting.max_token == 128
        assert again.prompt_config.system == "Context: {knowledge}"
        assert again.prompt_config.empty_response == "No idea."
        assert (again.similarity_threshold, again.vector_similarity_weight, again.top_n, again.top_k) == (0.5, 0.7, 2, 64)
    finally:
        client.delete_datasets(ids=[kb.id])


def test_update_message_must_be_a_dict(make_chat):
    with pytest.raises(CairnError) as e:
        make_chat().update(["name", "x"])
    assert e.value.code == 400


def test_get_chat_of_an_unknown_id_is_404(client):
    with pytest.raises(CairnError) as e:
        client.get_chat("c" * 32)
    assert e.value.code == 404


# ---------------------------------------------------------------------- list_chats
def test_list_chats_newest_first_ascending_and_paged(own_client):
    a, b, c = (own_client.create_chat(name=unique(n)) for n in "abc")
    assert [x.id for x in own_client.list_chats()] == [c.id, b.id, a.id]
    assert [x.id for x in own_client.list_chats(desc=False)] == [a.id, b.id, c.id]
    assert [x.id for x in own_client.list_chats(page=1, page_size=2)] == [c.id, b.id]
    assert [x.id for x in own_client.list_chats(page=2, page_size=2)] == [a.id]


def test_list_chats_by_update_time(own_client):
    a, b = own_client.create_chat(name=unique("a")), own_client.create_chat(name=unique("b"))
    time.sleep(0.01)
    a.update({"top_n": 5})
    assert own_client.list_chats(orderby="update_time")[0].id == a.id


def test_list_chats_page_size_defaults_to_30(own_client):
    for i in range(31):
        own_client.create_chat(name=f"many-{i:02d}")
    assert len(own_client.list_chats()) == 30
    assert len(own_client.list_chats(page=2)) == 1


def test_list_chats_by_exact_id_and_name(own_client):
    target = own_client.create_chat(name="Harbour Helper")
    own_client.create_chat(name="Harbour Helper Two")
    assert [x.id for x in own_client.list_chats(id=target.id)] == [target.id]
    assert [x.id for x in own_client.list_chats(name="Harbour Helper")] == [target.id]


def test_list_chats_keywords_are_case_insensitive_and_fuzzy(own_client):
    one = own_client.create_chat(name="Harbour Helper")
    two = own_client.create_chat(name="The HARBOUR desk")
    own_client.create_chat(name="Bakery bot")
    assert {x.id for x in own_client.list_chats(keywords="harbour")} == {one.id, two.id}


def test_exact_filters_take_precedence_over_keywords(own_client):
    target = own_client.create_chat(name="Bakery bot")
    own_client.create_chat(name="Harbour Helper")
    assert [x.id for x in own_client.list_chats(id=target.id, keywords="harbour")] == [target.id]


def test_list_chats_by_owner(own_client):
    mine = own_client.create_chat(name=unique("mine"))
    tenant = own_client.get("/users/me").json()["data"]["tenant_id"]
    assert [x.id for x in own_client.list_chats(owner_ids=[tenant])] == [mine.id]


# ---------------------------------------------------------------------- delete_chats
def test_delete_chats_by_ids(own_client):
    gone, kept = own_client.create_chat(name=unique("gone")), own_client.create_chat(name=unique("kept"))
    assert own_client.delete_chats(ids=[gone.id]) is None
    assert [x.id for x in own_client.list_chats()] == [kept.id]


@pytest.mark.parametrize("ids", [None, []])
def test_delete_chats_without_ids_deletes_nothing(own_client, ids):
    own_client.create_chat(name=unique("stay"))
    own_client.delete_chats(ids=ids)
    assert len(own_client.list_chats()) == 1


def test_delete_chats_delete_all(own_client, make_chat):
    theirs = make_chat()  # the admin's
    for n in "xyz":
        own_client.create_chat(name=unique(n))
    own_client.delete_chats(delete_all=True)
    assert own_client.list_chats() == []
    assert theirs.rag.get_chat(theirs.id).id == theirs.id


def test_delete_chats_with_an_unknown_id_is_404(own_client):
    kept = own_client.create_chat(name=unique("kept"))
    with pytest.raises(CairnError) as e:
        own_client.delete_chats(ids=["d" * 32])
    assert e.value.code == 404
    assert [x.id for x in own_client.list_chats()] == [kept.id]


def test_delete_chats_with_some_unknown_or_duplicate_ids_deletes_the_rest_without_raising(own_client):
    # ragflow-sdk raises only when code != 0; a partial delete is code 0 with data.errors.
    gone, kept = own_client.create_chat(name=unique("gone")), own_client.create_chat(name=unique("kept"))
    assert own_client.delete_chats(ids=["d" * 32, gone.id, gone.id]) is None
    assert [x.id for x in own_client.list_chats()] == [kept.id]


# ---------------------------------------------------------------------- grounding check
def test_an_answer_stating_a_figure_no_chunk_holds_is_replaced_and_the_message_says_so(client, make_chat, fake_llm):
    kb = client.create_dataset(name=unique("grounded"))
    doc = kb.upload_documents([{"display_name": "bothy.txt", "blob": b"The Corrour bothy sleeps 12 walkers."}])[0]
    doc.add_chunk(content="The Corrour bothy sleeps 12 walkers.")
    try:
        chat = make_chat(dataset_ids=[kb.id], prompt_config={"grounding_check": True})
        word = unique("corrour")
        fake_llm.script(word, "The Corrour bothy sleeps 40 walkers.")
        for stream in (False, True):
            messages = list(chat.create_session().ask(f"How many walkers does the Corrour bothy sleep? {word}", stream=stream))
            last = messages[-1]
            assert "40" not in last.content
            assert 'The documents say: "The Corrour bothy sleeps 12 walkers"' in last.content
            assert last.grounding["checked"] is True
            assert last.grounding["replaced"][0]["unsupported"] == ["40"]
    finally:
        client.delete_datasets(ids=[kb.id])
