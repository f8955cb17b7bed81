"""Chunks: spec "Resources and their fields / Chunk", "Chunks within a document", "States and transitions", "Errors"."""

from __future__ import annotations

import time

import pytest

from cairn import CairnError, Chunk, ChunkUpdateError
from files import make_text
from support import unique

# A 1x1 PNG (base64, no data: prefix).
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.fixture
def kb(client):
    ds = client.create_dataset(name=unique("chunks"))
    yield ds
    try:
        client.delete_datasets(ids=[ds.id])
    except CairnError:
        pass


@pytest.fixture
def doc(kb):
    [d] = kb.upload_documents([{"display_name": "field-notes.txt", "blob": make_text(["Notes from the field."])}])
    return d


def ids(chunks: list[Chunk]) -> set[str]:
    return {c.id for c in chunks}


# ---------------------------------------------------------------------- Document.add_chunk
def test_add_chunk_returns_a_chunk_with_the_spec_fields(kb, doc):
    before = time.time()
    chunk = doc.add_chunk(
        content="The lantern room is reached by 127 steps.",
        important_keywords=["lantern", "steps"],
        questions=["How many steps lead to the lantern room?"],
        tag_kwd=["architecture"],
    )
    assert isinstance(chunk, Chunk)
    assert chunk.id
    assert chunk.content == "The lantern room is reached by 127 steps."
    assert chunk.important_keywords == ["lantern", "steps"]
    assert chunk.questions == ["How many steps lead to the lantern room?"]
    assert chunk.tag_kwd == ["architecture"]
    assert chunk.document_id == doc.id
    assert chunk.dataset_id == kb.id
    assert chunk.available is True  # available: true (default)
    assert chunk.image_id == ""  # empty string when no image
    assert isinstance(chunk.create_timestamp, float)  # seconds since 1970-01-01
    assert before - 1 <= chunk.create_timestamp <= time.time() + 1
    assert isinstance(chunk.create_time, str) and chunk.create_time


def test_add_chunk_list_parameters_default_to_empty(doc):
    chunk = doc.add_chunk(content="Only content.")
    assert chunk.important_keywords == []
    assert chunk.questions == []
    assert chunk.tag_kwd == []


def test_add_chunk_with_an_image(doc):
    chunk = doc.add_chunk(content="A picture of the tower.", image_base64=PNG_1X1)
    assert chunk.image_id


def test_add_chunk_without_content_is_400(doc):
    with pytest.raises(CairnError) as e:
        doc.add_chunk(content="")
    assert e.value.code == 400


def test_added_chunks_count_on_the_document(kb, doc):
    doc.add_chunk(content="one")
    doc.add_chunk(content="two")
    assert kb.list_documents(id=doc.id)[0].chunk_count == 2


# ---------------------------------------------------------------------- Document.list_chunks
def test_list_chunks_returns_the_documents_chunks(doc):
    added = [doc.add_chunk(content=f"Chunk number {i} about tides.") for i in range(3)]
    listed = doc.list_chunks()
    assert ids(listed) == ids(added)
    for c in listed:
        assert c.document_id == doc.id
        assert c.document_name == doc.name


def test_list_chunks_keywords_match_content(doc):
    harbour = doc.add_chunk(content="The harbour freezes in January.")
    doc.add_chunk(content="Seabirds nest on the cliffs.")
    assert ids(doc.list_chunks(keywords="harbour")) == {harbour.id}


def test_list_chunks_by_id(doc):
    one = doc.add_chunk(content="first")
    doc.add_chunk(content="second")
    assert [c.id for c in doc.list_chunks(id=one.id)] == [one.id]


def test_list_chunks_pages(doc):
    added = [doc.add_chunk(content=f"paged chunk {i}") for i in range(3)]
    first, second = doc.list_chunks(page=1, page_size=2), doc.list_chunks(page=2, page_size=2)
    assert len(first) == 2 and len(second) == 1
    assert ids(first) | ids(second) == ids(added)


def test_list_chunks_of_an_invalid_chunk_id_is_1001(doc):
    doc.add_chunk(content="exists")
    with pytest.raises(CairnError) as e:
        doc.list_chunks(id="no-such-chunk")
    assert e.value.code == 1001  # Invalid Chunk ID


def test_chunks_of_a_parsed_document(kb, doc):
    [(_, status, chunk_count, _)] = kb.parse_documents([doc.id])
    assert status == "DONE"
    chunks = doc.list_chunks()
    assert len(chunks) == chunk_count > 0
    assert "Notes from the field." in " ".join(c.content for c in chunks)


# ---------------------------------------------------------------------- Chunk.update
def test_update_chunk_fields(doc):
    chunk = doc.add_chunk(content="draft")
    chunk.update({
        "content": "final text",
        "important_keywords": ["final"],
        "questions": ["What is final?"],
        "tag_kwd": ["edited"],
    })
    [again] = doc.list_chunks(id=chunk.id)
    assert again.content == "final text"
    assert again.important_keywords == ["final"]
    assert again.questions == ["What is final?"]
    assert again.tag_kwd == ["edited"]


def test_chunk_availability_moves_between_true_and_false(doc):
    chunk = doc.add_chunk(content="toggle me")
    chunk.update({"available": False})  # available=true --update with available=false--> false
    assert doc.list_chunks(id=chunk.id)[0].available is False
    chunk.update({"available": True})  # available=false --update with available=true--> true
    assert doc.list_chunks(id=chunk.id)[0].available is True


def test_update_of_an_invalid_chunk_id_is_1001(kb, doc):
    ghost = Chunk(doc.rag, {"id": "no-such-chunk", "dataset_id": kb.id, "document_id": doc.id})
    with pytest.raises(ChunkUpdateError) as e:
        ghost.update({"content": "anything"})
    assert e.value.code == 1001  # Invalid Chunk ID
    assert isinstance(e.value, CairnError)


@pytest.mark.parametrize("change", [{"content": "   "}, {"important_keywords": "not a list"}, {"available": "maybe"}])
def test_a_failed_chunk_update_is_1002(doc, change):
    chunk = doc.add_chunk(content="stays as it was")
    with pytest.raises(ChunkUpdateError) as e:
        chunk.update(change)
    assert e.value.code == 1002  # Chunk Update Failed
    assert doc.list_chunks(id=chunk.id)[0].content == "stays as it was"


# ---------------------------------------------------------------------- Document.delete_chunks
def test_delete_chunks_by_ids(doc):
    gone, kept = doc.add_chunk(content="gone"), doc.add_chunk(content="kept")
    assert doc.delete_chunks(ids=[gone.id]) is None
    assert ids(doc.list_chunks()) == {kept.id}


@pytest.mark.parametrize("chunk_ids", [None, []])
def test_delete_chunks_without_ids_deletes_nothing(doc, chunk_ids):
    doc.add_chunk(content="survivor")
    doc.delete_chunks(ids=chunk_ids)
    assert len(doc.list_chunks()) == 1


def test_delete_chunks_delete_all(kb, doc):
    for i in range(3):
        doc.add_chunk(content=f"doomed {i}")
    doc.delete_chunks(delete_all=True)
    assert doc.list_chunks() == []
    assert kb.list_documents(id=doc.id)[0].chunk_count == 0


def test_delete_chunks_with_only_invalid_chunk_ids_is_1001(doc):
    kept = doc.add_chunk(content="kept")
    with pytest.raises(CairnError) as e:
        doc.delete_chunks(ids=["no-such-chunk", "nor-this-one"])
    assert e.value.code == 1001
    assert "no-such-chunk" in str(e.value) and "nor-this-one" in str(e.value)
    assert ids(doc.list_chunks()) == {kept.id}


def test_delete_chunks_with_some_invalid_or_duplicate_ids_deletes_the_rest_without_raising(doc):
    gone, kept = doc.add_chunk(content="gone"), doc.add_chunk(content="kept")
    assert doc.delete_chunks(ids=[gone.id, "no-such-chunk", gone.id]) is None
    assert ids(doc.list_chunks()) == {kept.id}
