"""Datasets: spec "Resources and their fields / DataSet", "Dataset management", "Limits", "Authentication"."""

from __future__ import annotations

import re
import time

import pytest
import requests

from cairn import CairnError, Client, DataSet, RAGFlow
from support import unique

# A 1x1 PNG, as a data URI (spec: avatar is a base64 image).
PNG_AVATAR = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def config(ds: DataSet) -> dict:
    return ds.parser_config.to_json() if ds.parser_config else {}


def refetch(client: Client, ds: DataSet) -> DataSet:
    [found] = client.list_datasets(id=ds.id)
    return found


@pytest.fixture
def make_dataset(client: Client):
    """Creates datasets of the admin and deletes them afterwards."""
    made: list[str] = []

    def make(**kwargs) -> DataSet:
        kwargs.setdefault("name", unique("ds"))
        ds = client.create_dataset(**kwargs)
        made.append(ds.id)
        return ds

    yield make
    try:
        client.delete_datasets(ids=made)
    except CairnError:
        for i in made:
            try:
                client.delete_datasets(ids=[i])
            except CairnError:
                pass


# ---------------------------------------------------------------------- create_dataset
def test_ragflow_is_an_alias_of_client():
    assert RAGFlow is Client


def test_create_dataset_with_only_a_name_gets_the_spec_defaults(make_dataset):
    name = unique("defaults")
    before = time.time()
    ds = make_dataset(name=name)
    after = time.time()
    assert isinstance(ds, DataSet)
    assert re.fullmatch(r"[0-9a-f]{32}", ds.id)
    assert ds.name == name
    assert ds.avatar is None  # avatar: default none
    assert ds.description is None  # description: default none
    assert ds.permission == "me"  # permission: me (default)
    assert ds.chunk_method == "naive"  # chunk_method: default naive
    assert ds.pagerank == 0  # pagerank: default 0
    assert ds.chunk_count == 0
    assert re.fullmatch(r"[^@]+@[^@]+(@[^@]+)?", ds.embedding_model)  # a built-in default exists, model@factory
    # Timestamps are Unix seconds.
    assert isinstance(ds.create_time, int)
    assert int(before) - 1 <= ds.create_time <= after + 1


def test_naive_parser_config_has_the_spec_defaults_at_dataset_level(make_dataset):
    cfg = config(make_dataset())
    assert cfg["chunk_token_num"] == 512
    assert cfg["delimiter"] == "\n"
    assert cfg["html4excel"] is False
    assert cfg["layout_recognize"] is True
    assert cfg["raptor"] == {"use_raptor": False}
    assert cfg["parent_child"] == {"use_parent_child": False, "children_delimiter": "\n"}


@pytest.mark.parametrize("method", ["qa", "manual", "paper", "book", "laws", "presentation"])
def test_parser_config_of_raptor_methods_is_raptor_off(make_dataset, method):
    ds = make_dataset(chunk_method=method)
    assert ds.chunk_method == method
    assert config(ds) == {"raptor": {"use_raptor": False}}


@pytest.mark.parametrize("method", ["table", "picture", "one", "email"])
def test_parser_config_of_table_picture_one_email_is_none(make_dataset, method):
    ds = make_dataset(chunk_method=method)
    assert ds.chunk_method == method
    assert config(ds) == {}


def test_create_dataset_with_every_parameter(make_dataset):
    ds = make_dataset(
        avatar=PNG_AVATAR,
        description="Field notes",
        permission="team",
        chunk_method="qa",
        parser_config={"raptor": {"use_raptor": True}},
    )
    assert ds.avatar == PNG_AVATAR
    assert ds.description == "Field notes"
    assert ds.permission == "team"
    assert ds.chunk_method == "qa"
    assert config(ds)["raptor"]["use_raptor"] is True


def test_given_parser_config_keys_are_kept_and_the_rest_defaulted(make_dataset):
    cfg = config(make_dataset(parser_config={"chunk_token_num": 256, "delimiter": "\n!?;"}))
    assert cfg["chunk_token_num"] == 256
    assert cfg["delimiter"] == "\n!?;"
    assert cfg["raptor"] == {"use_raptor": False}


def test_parser_config_may_be_a_parser_config_object(client, make_dataset):
    ds = make_dataset(parser_config=DataSet.ParserConfig(client, {"chunk_token_num": 300}))
    assert ds.parser_config.chunk_token_num == 300


def test_dataset_name_may_have_128_characters(make_dataset):
    name = "n" * 118 + unique("")[-10:]
    assert len(name) == 128
    assert make_dataset(name=name).name == name


def test_dataset_name_longer_than_128_characters_is_400(client):
    with pytest.raises(CairnError) as e:
        client.create_dataset(name="n" * 129)
    assert e.value.code == 400


@pytest.mark.parametrize("name", ["", "   "])
def test_dataset_name_is_required(client, name):
    with pytest.raises(CairnError) as e:
        client.create_dataset(name=name)
    assert e.value.code == 400


def test_dataset_names_are_unique_case_insensitively(make_dataset):
    base = unique("Case")
    first = make_dataset(name=base.upper())
    second = make_dataset(name=base.lower())
    assert first.name.lower() != second.name.lower()


@pytest.mark.parametrize("model", ["no-separator", "@factory-only", "name-only@", "m" * 250 + "@Builtin"])
def test_malformed_embedding_model_is_400(client, model):
    with pytest.raises(CairnError) as e:
        client.create_dataset(name=unique("emb"), embedding_model=model)
    assert e.value.code == 400


def test_unknown_embedding_model_is_400(client):
    with pytest.raises(CairnError) as e:
        client.create_dataset(name=unique("emb"), embedding_model="no-such-model@NoSuchFactory")
    assert e.value.code == 400


def test_permission_is_me_or_team(client, make_dataset):
    assert make_dataset(permission="team").permission == "team"
    with pytest.raises(CairnError) as e:
        client.create_dataset(name=unique("perm"), permission="everyone")
    assert e.value.code == 400


@pytest.mark.parametrize("method", ["unknown", "tag", "knowledge_graph"])
def test_create_accepts_only_the_dataset_chunk_methods(client, method):
    with pytest.raises(CairnError) as e:
        client.create_dataset(name=unique("cm"), chunk_method=method)
    assert e.value.code == 400


# ---------------------------------------------------------------------- DataSet.update
def test_update_changes_the_given_keys(client, make_dataset):
    ds = make_dataset()
    new_name = unique("renamed")
    ds.update({"name": new_name, "description": "updated", "permission": "team", "pagerank": 50})
    assert ds.name == new_name  # the object reflects the update
    again = refetch(client, ds)
    assert again.name == new_name
    assert again.description == "updated"
    assert again.permission == "team"
    assert again.pagerank == 50


def test_update_avatar(client, make_dataset):
    ds = make_dataset()
    ds.update({"avatar": PNG_AVATAR})
    assert refetch(client, ds).avatar == PNG_AVATAR


def test_update_avatar_longer_than_65535_characters_is_400(make_dataset):
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        ds.update({"avatar": "data:image/png;base64," + "A" * 65536})
    assert e.value.code == 400


@pytest.mark.parametrize("pagerank", [-1, 101])
def test_pagerank_outside_0_to_100_is_400(make_dataset, pagerank):
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        ds.update({"pagerank": pagerank})
    assert e.value.code == 400


@pytest.mark.parametrize("pagerank", [0, 100])
def test_pagerank_bounds_are_accepted(client, make_dataset, pagerank):
    ds = make_dataset()
    ds.update({"pagerank": pagerank})
    assert refetch(client, ds).pagerank == pagerank


def test_update_name_with_non_bmp_characters_is_400(make_dataset):
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        ds.update({"name": "rocks \U0001faa8"})
    assert e.value.code == 400


def test_update_name_longer_than_128_characters_is_400(make_dataset):
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        ds.update({"name": "n" * 129})
    assert e.value.code == 400


def test_update_to_a_name_taken_in_another_case_is_400(make_dataset):
    taken = make_dataset(name=unique("Taken"))
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        ds.update({"name": taken.name.upper()})
    assert e.value.code == 400


def test_update_allows_the_tag_chunk_method(client, make_dataset):
    ds = make_dataset()
    ds.update({"chunk_method": "tag"})
    assert refetch(client, ds).chunk_method == "tag"


def test_update_chunk_method_gives_that_methods_parser_config(client, make_dataset):
    ds = make_dataset()
    ds.update({"chunk_method": "qa"})
    again = refetch(client, ds)
    assert again.chunk_method == "qa"
    assert config(again) == {"raptor": {"use_raptor": False}}


def test_update_embedding_model_while_chunk_count_is_0(client, make_dataset):
    ds = make_dataset()
    assert ds.chunk_count == 0
    ds.update({"embedding_model": ds.embedding_model})
    assert refetch(client, ds).embedding_model == ds.embedding_model


def test_update_unknown_embedding_model_is_400(make_dataset):
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        ds.update({"embedding_model": "no-such-model@NoSuchFactory"})
    assert e.value.code == 400


def test_update_of_a_missing_dataset_is_404(client):
    ghost = DataSet(client, {"id": "0" * 32, "name": "ghost"})
    with pytest.raises(CairnError) as e:
        ghost.update({"name": unique("ghost")})
    assert e.value.code == 404


def test_update_message_must_be_a_dict(make_dataset):
    with pytest.raises(CairnError) as e:
        make_dataset().update("name=x")
    assert e.value.code == 400


# ---------------------------------------------------------------------- list_datasets
def test_list_datasets_defaults_newest_first(fresh_client):
    a, b, c = (fresh_client.create_dataset(name=unique(n)) for n in ("a", "b", "c"))
    assert [d.id for d in fresh_client.list_datasets()] == [c.id, b.id, a.id]  # orderby create_time, desc true


def test_list_datasets_ascending_and_paged(fresh_client):
    a, b, c = (fresh_client.create_dataset(name=unique(n)) for n in ("a", "b", "c"))
    assert [d.id for d in fresh_client.list_datasets(desc=False)] == [a.id, b.id, c.id]
    assert [d.id for d in fresh_client.list_datasets(page=1, page_size=2)] == [c.id, b.id]
    assert [d.id for d in fresh_client.list_datasets(page=2, page_size=2)] == [a.id]
    assert fresh_client.list_datasets(page=3, page_size=2) == []


def test_list_datasets_by_update_time(fresh_client):
    a, b = (fresh_client.create_dataset(name=unique(n)) for n in ("a", "b"))
    time.sleep(0.01)
    a.update({"description": "touched"})
    assert [d.id for d in fresh_client.list_datasets(orderby="update_time")][0] == a.id
    assert [d.id for d in fresh_client.list_datasets(orderby="create_time")][0] == b.id


def test_list_datasets_page_size_defaults_to_30(fresh_client):
    for i in range(31):
        fresh_client.create_dataset(name=f"many-{i:02d}")
    assert len(fresh_client.list_datasets()) == 30
    assert len(fresh_client.list_datasets(page=2)) == 1


def test_a_page_size_above_the_cap_is_clamped_to_100(fresh_client):
    # issue 15 item 4: as RAGFlow clients expect, an oversized page_size is clamped, not refused
    for i in range(101):
        fresh_client.create_dataset(name=f"cap-{i:03d}")
    assert len(fresh_client.list_datasets(page_size=100_000)) == 100
    assert len(fresh_client.list_datasets(page=2, page_size=100_000)) == 1


def test_list_datasets_filters_by_id_and_name(client, make_dataset):
    ds = make_dataset()
    make_dataset()
    assert [d.id for d in client.list_datasets(id=ds.id)] == [ds.id]
    assert [d.id for d in client.list_datasets(name=ds.name)] == [ds.id]


def test_list_datasets_of_an_unknown_id_is_404(client):
    with pytest.raises(CairnError) as e:
        client.list_datasets(id="f" * 32)
    assert e.value.code == 404


def test_get_dataset_by_name(client, make_dataset):
    ds = make_dataset()
    assert client.get_dataset(ds.name).id == ds.id


def test_get_dataset_of_an_unknown_name_is_404(client):
    with pytest.raises(CairnError) as e:
        client.get_dataset(unique("nobody"))
    assert e.value.code == 404


def test_parsing_status_counts_are_present_only_when_asked(client, make_dataset):
    ds = make_dataset()
    [plain] = client.list_datasets(id=ds.id)
    for key in ("unstart_count", "running_count", "cancel_count", "done_count", "fail_count"):
        assert not hasattr(plain, key)
    [with_status] = client.list_datasets(id=ds.id, include_parsing_status=True)
    for key in ("unstart_count", "running_count", "cancel_count", "done_count", "fail_count"):
        assert getattr(with_status, key) == 0


def test_unknown_response_keys_are_kept(client, make_dataset):
    ds = make_dataset()
    assert refetch(client, ds).to_json()["id"] == ds.id  # to_json() dumps every attribute


# ---------------------------------------------------------------------- delete_datasets
def test_delete_datasets_by_ids(client, make_dataset):
    ds, kept = make_dataset(), make_dataset()
    assert client.delete_datasets(ids=[ds.id]) is None
    with pytest.raises(CairnError) as e:
        client.list_datasets(id=ds.id)
    assert e.value.code == 404
    assert [d.id for d in client.list_datasets(id=kept.id)] == [kept.id]


@pytest.mark.parametrize("ids", [None, []])
def test_delete_datasets_without_ids_deletes_nothing(fresh_client, ids):
    fresh_client.create_dataset(name=unique("keep"))
    fresh_client.delete_datasets(ids=ids)
    assert len(fresh_client.list_datasets()) == 1


def test_delete_datasets_delete_all_deletes_every_dataset_of_the_caller(fresh_client, new_account):
    other = new_account().client
    theirs = other.create_dataset(name=unique("theirs"))
    for n in ("x", "y"):
        fresh_client.create_dataset(name=unique(n))
    fresh_client.delete_datasets(delete_all=True)
    assert fresh_client.list_datasets() == []
    assert [d.id for d in other.list_datasets()] == [theirs.id]


def test_delete_datasets_with_an_unknown_id_is_404_and_deletes_nothing(client, make_dataset):
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        client.delete_datasets(ids=[ds.id, "e" * 32])
    assert e.value.code == 404
    assert [d.id for d in client.list_datasets(id=ds.id)] == [ds.id]


# ---------------------------------------------------------------------- authentication and permission
def test_an_invalid_api_key_is_401(cairn_server):
    bad = Client(api_key="not-a-key", base_url=cairn_server.base_url)
    with pytest.raises(CairnError) as e:
        bad.list_datasets()
    assert e.value.code == 401


def test_a_missing_authorization_header_is_401(cairn_server):
    r = requests.get(f"{cairn_server.base_url}/api/v1/datasets", timeout=30)
    assert r.status_code == 401
    assert r.json()["code"] == 401


def test_another_workspaces_private_dataset_cannot_be_told_from_a_missing_one(make_dataset, fresh_client):
    ds = make_dataset()
    with pytest.raises(CairnError) as e:
        DataSet(fresh_client, {"id": ds.id}).update({"description": "mine now"})
    assert e.value.code == 404


def test_team_members_manage_team_datasets_but_not_private_ones(new_account):
    owner, member = new_account(), new_account()
    r = owner.client.post(f"/tenants/{owner.tenant_id}/users", json={"email": member.email})
    assert r.json()["code"] == 0, r.text
    private = owner.client.create_dataset(name=unique("private"))  # permission me: only the owner manages
    shared = owner.client.create_dataset(name=unique("shared"), permission="team")  # all team members manage

    visible = [d.id for d in member.client.list_datasets()]
    assert shared.id in visible
    assert private.id not in visible

    DataSet(member.client, {"id": shared.id}).update({"description": "edited by a member"})
    assert refetch(owner.client, shared).description == "edited by a member"

    with pytest.raises(CairnError) as e:
        DataSet(member.client, {"id": private.id}).update({"description": "not allowed"})
    assert e.value.code == 403  # an authenticated caller without access


def test_errors_carry_code_and_message(client):
    with pytest.raises(CairnError) as e:
        client.create_dataset(name="n" * 129)
    assert isinstance(e.value.code, int)
    assert e.value.message
    assert str(e.value) == e.value.message


def test_check_embedding_compares_a_model_with_the_stored_vectors(make_dataset):
    kb = make_dataset()
    doc = kb.upload_documents([{"display_name": "bothy.txt", "blob": b"The Corrour bothy sleeps 12 walkers.\n\nIt stands below the Devil's Point."}])[0]
    [(_, status, _, _)] = kb.parse_documents([doc.id])
    assert status == "DONE"
    same = kb.check_embedding(kb.embedding_model, check_num=2)
    assert same["summary"]["avg_cos_sim"] > 0.99
    assert same["summary"]["valid"] >= 1
    with pytest.raises(CairnError) as err:
        kb.check_embedding("sentence-transformers/all-MiniLM-L6-v2@Builtin")
    assert err.value.code == 400
    assert "below 0.9" in err.value.message
    assert err.value.data["summary"]["avg_cos_sim"] < 0.9
