"""Documents: spec "Resources and their fields / Document" and "Documents within a dataset"."""

from __future__ import annotations

import re
import time

import pytest

from cairn import CairnError, Document
from files import make_text
from support import long_text, unique, wait_for_run

NOTES = make_text(["Granite lighthouses guard the northern coast.", "Each keeper logs the tide twice a day."])


@pytest.fixture
def kb(client):
    """An empty knowledge base (dataset) of the admin, deleted afterwards."""
    ds = client.create_dataset(name=unique("docs"))
    yield ds
    try:
        client.delete_datasets(ids=[ds.id])
    except CairnError:
        pass


def upload_one(kb, name: str = "notes.txt", blob: bytes = NOTES) -> Document:
    [doc] = kb.upload_documents([{"display_name": name, "blob": blob}])
    return doc


# ---------------------------------------------------------------------- upload_documents
def test_upload_returns_documents_with_the_spec_defaults(kb):
    doc = upload_one(kb)
    assert isinstance(doc, Document)
    assert re.fullmatch(r"[0-9a-f]{32}", doc.id)
    assert doc.name == "notes.txt"
    assert doc.dataset_id == kb.id
    assert doc.size == len(NOTES)  # size: bytes
    assert doc.run == "UNSTART"  # run: UNSTART (default)
    assert doc.chunk_method == "naive"
    assert doc.source_type == "local"
    assert doc.chunk_count == 0
    assert doc.token_count == 0
    assert doc.progress == 0.0


def test_upload_several_files_in_one_call(kb):
    docs = kb.upload_documents([{"display_name": f"part-{i}.txt", "blob": NOTES} for i in range(3)])
    assert [d.name for d in docs] == ["part-0.txt", "part-1.txt", "part-2.txt"]
    assert {d.id for d in kb.list_documents()} == {d.id for d in docs}


def test_a_failed_file_does_not_discard_the_batch(kb):
    with pytest.warns(UserWarning):
        docs = kb.upload_documents([
            {"display_name": "good.txt", "blob": NOTES},
            {"display_name": "bad.xyz", "blob": b"\x00\x01 not a supported format"},
        ])
    assert [d.name for d in docs] == ["good.txt"]
    assert [d.name for d in kb.list_documents()] == ["good.txt"]


def test_upload_where_every_file_fails_is_400(kb):
    with pytest.raises(CairnError) as e:
        kb.upload_documents([{"display_name": "bad.xyz", "blob": b"\x00\x01 not a supported format"}])
    assert e.value.code == 400
    assert kb.list_documents() == []


# ---------------------------------------------------------------------- list_documents
def test_list_documents_newest_first_by_default(kb):
    a, b, c = (upload_one(kb, f"{n}.txt") for n in "abc")
    assert [d.id for d in kb.list_documents()] == [c.id, b.id, a.id]
    assert [d.id for d in kb.list_documents(desc=False)] == [a.id, b.id, c.id]


def test_list_documents_pages(kb):
    a, b, c = (upload_one(kb, f"{n}.txt") for n in "abc")
    assert [d.id for d in kb.list_documents(page=1, page_size=2)] == [c.id, b.id]
    assert [d.id for d in kb.list_documents(page=2, page_size=2)] == [a.id]


def test_list_documents_order_by_update_time(kb):
    a, b = upload_one(kb, "a.txt"), upload_one(kb, "b.txt")
    time.sleep(0.01)
    a.update({"meta_fields": {"touched": True}})
    assert kb.list_documents(orderby="update_time")[0].id == a.id
    assert kb.list_documents(order_by="update_time")[0].id == a.id  # the spec's spelling


def test_list_documents_keywords_match_titles(kb):
    report = upload_one(kb, "quarterly-report.txt")
    upload_one(kb, "minutes.txt", make_text(["the report is attached"]))
    assert [d.id for d in kb.list_documents(keywords="REPORT")] == [report.id]


def test_list_documents_by_id(kb):
    doc = upload_one(kb, "one.txt")
    upload_one(kb, "two.txt")
    assert [d.id for d in kb.list_documents(id=doc.id)] == [doc.id]


def test_list_documents_create_time_window_in_unix_seconds(kb):
    doc = upload_one(kb)
    now = int(time.time())
    assert [d.id for d in kb.list_documents(create_time_from=now - 3600)] == [doc.id]
    assert [d.id for d in kb.list_documents(create_time_from=now - 3600, create_time_to=now + 3600)] == [doc.id]
    assert kb.list_documents(create_time_from=now + 3600) == []
    assert kb.list_documents(create_time_to=now - 3600) == []
    assert [d.id for d in kb.list_documents(create_time_from=0, create_time_to=0)] == [doc.id]  # 0: no filter


# ---------------------------------------------------------------------- Document.update
def test_update_display_name(kb):
    doc = upload_one(kb)
    doc.update({"display_name": "renamed.txt"})
    assert kb.list_documents(id=doc.id)[0].name == "renamed.txt"


def test_update_meta_fields(kb):
    doc = upload_one(kb)
    doc.update({"meta_fields": {"author": "alice", "year": 2024, "tags": ["a", "b"]}})
    assert kb.list_documents(id=doc.id)[0].meta_fields == {"author": "alice", "year": 2024, "tags": ["a", "b"]}


def test_meta_fields_must_be_a_dict(kb):
    doc = upload_one(kb)
    with pytest.raises(CairnError) as e:
        doc.update({"meta_fields": "author=alice"})
    assert e.value.code == 400


def test_update_chunk_method_gives_the_document_level_parser_config(kb):
    doc = upload_one(kb)
    doc.update({"chunk_method": "qa"})
    [qa] = kb.list_documents(id=doc.id)
    assert qa.chunk_method == "qa"
    assert qa.parser_config.to_json() == {"raptor": {"use_raptor": False}}
    doc.update({"chunk_method": "naive"})
    [naive] = kb.list_documents(id=doc.id)
    assert naive.parser_config.chunk_token_num == 128  # naive default at document level


def test_update_parser_config(kb):
    doc = upload_one(kb)
    doc.update({"parser_config": {"chunk_token_num": 64}})
    assert kb.list_documents(id=doc.id)[0].parser_config.chunk_token_num == 64


def test_update_unknown_chunk_method_is_400(kb):
    doc = upload_one(kb)
    with pytest.raises(CairnError) as e:
        doc.update({"chunk_method": "no-such-method"})
    assert e.value.code == 400


# ---------------------------------------------------------------------- Document.download
def test_download_returns_the_uploaded_bytes(kb):
    blob = NOTES + "Café au lait ☕\n".encode()  # returned byte for byte
    doc = upload_one(kb, "notes.txt", blob)
    content = doc.download()
    assert isinstance(content, bytes)
    assert content == blob


def test_download_of_a_deleted_document_is_404(kb):
    doc = upload_one(kb)
    kb.delete_documents(ids=[doc.id])
    with pytest.raises(CairnError) as e:
        doc.download()
    assert e.value.code == 404


# ---------------------------------------------------------------------- delete_documents
def test_delete_documents_by_ids(kb):
    gone, kept = upload_one(kb, "gone.txt"), upload_one(kb, "kept.txt")
    assert kb.delete_documents(ids=[gone.id]) is None
    assert [d.id for d in kb.list_documents()] == [kept.id]


@pytest.mark.parametrize("ids", [None, []])
def test_delete_documents_without_ids_deletes_nothing(kb, ids):
    upload_one(kb)
    kb.delete_documents(ids=ids)
    assert len(kb.list_documents()) == 1


def test_delete_documents_delete_all(kb):
    for n in "abc":
        upload_one(kb, f"{n}.txt")
    kb.delete_documents(delete_all=True)
    assert kb.list_documents() == []


def test_delete_documents_with_an_unknown_id_is_404(kb):
    doc = upload_one(kb)
    with pytest.raises(CairnError) as e:
        kb.delete_documents(ids=["d" * 32])
    assert e.value.code == 404
    assert [d.id for d in kb.list_documents()] == [doc.id]


def test_delete_documents_with_some_unknown_or_duplicate_ids_deletes_the_rest_without_raising(kb):
    gone, kept = upload_one(kb), upload_one(kb)
    assert kb.delete_documents(ids=[gone.id, "d" * 32, gone.id]) is None
    assert [d.id for d in kb.list_documents()] == [kept.id]


# ---------------------------------------------------------------------- parsing
def test_parse_documents_waits_and_reports_each_document(kb):
    a, b = upload_one(kb, "a.txt"), upload_one(kb, "b.txt")
    result = kb.parse_documents([a.id, b.id])
    assert [r[0] for r in result] == [a.id, b.id]
    for doc_id, status, chunk_count, token_count in result:
        assert status == "DONE"
        assert chunk_count > 0
        assert token_count > 0
    [parsed] = kb.list_documents(id=a.id)
    assert parsed.run == "DONE"
    assert parsed.chunk_count == result[0][2]


def test_parsed_documents_are_counted_as_done(client, kb):
    doc = upload_one(kb)
    kb.parse_documents([doc.id])
    [counted] = client.list_datasets(id=kb.id, include_parsing_status=True)
    assert counted.done_count == 1
    assert counted.unstart_count == 0
    assert counted.chunk_count > 0


def test_async_parse_documents_returns_at_once_and_parsing_runs_in_the_background(kb):
    doc = upload_one(kb)
    assert kb.async_parse_documents([doc.id]) is None
    assert wait_for_run(kb, doc.id).run == "DONE"


def test_async_cancel_parse_documents_stops_parsing(kb):
    doc = upload_one(kb, "long.txt", long_text())
    kb.async_parse_documents([doc.id])
    kb.async_cancel_parse_documents([doc.id])
    assert wait_for_run(kb, doc.id).run == "CANCEL"


def test_parse_documents_cancels_pending_parsing_on_keyboard_interrupt(kb, monkeypatch):
    doc = upload_one(kb, "long.txt", long_text())
    cancelled: list[list[str]] = []
    real_cancel = kb.async_cancel_parse_documents

    def spy(document_ids):
        cancelled.append(list(document_ids))
        real_cancel(document_ids)

    def interrupt(_seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(kb, "async_cancel_parse_documents", spy)
    monkeypatch.setattr("cairn.dataset.time.sleep", interrupt)
    with pytest.raises(KeyboardInterrupt):
        kb.parse_documents([doc.id])
    monkeypatch.undo()
    assert cancelled == [[doc.id]]
    assert wait_for_run(kb, doc.id).run == "CANCEL"


def test_parsing_an_unknown_document_is_404(kb):
    with pytest.raises(CairnError) as e:
        kb.async_parse_documents(["c" * 32])
    assert e.value.code == 404


def test_embedding_model_may_change_only_while_chunk_count_is_0(client, kb, fake_models):
    doc = upload_one(kb)
    kb.parse_documents([doc.id])
    with pytest.raises(CairnError) as e:
        kb.update({"embedding_model": fake_models.embedding_model})
    assert e.value.code == 400
    kb.delete_documents(delete_all=True)
    kb.update({"embedding_model": fake_models.embedding_model})
    assert client.list_datasets(id=kb.id)[0].embedding_model == fake_models.embedding_model
