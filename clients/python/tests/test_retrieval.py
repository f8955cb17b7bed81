"""Retrieve chunks: spec "Retrieve chunks", "Reference chunk" scores, "Errors" (embedding model mismatch)."""

from __future__ import annotations

import pytest

from cairn import CairnError, Chunk
from files import make_text
from support import unique

LIGHTHOUSE = "The lighthouse keeper climbs the spiral stairs every evening to light the lamp."
BREAD = "Sourdough bread needs a lively starter and a long, cool fermentation."
ORBIT = "A geostationary satellite orbits the earth once per sidereal day."
COMET = "The comet's tail always points away from the sun, pushed by the solar wind."


@pytest.fixture(scope="module")
def corpus(client):
    """A knowledge base with two documents: `facts` (lighthouse, bread, orbit) and `space` (comet)."""
    kb = client.create_dataset(name=unique("retrieval"))
    facts, space = kb.upload_documents([
        {"display_name": "facts.txt", "blob": make_text(["facts"])},
        {"display_name": "space.txt", "blob": make_text(["space"])},
    ])
    for text in (LIGHTHOUSE, BREAD, ORBIT):
        facts.add_chunk(content=text)
    space.add_chunk(content=COMET)
    facts.update({"meta_fields": {"author": "alice"}})
    space.update({"meta_fields": {"author": "bob"}})
    yield kb, facts, space
    try:
        client.delete_datasets(ids=[kb.id])
    except CairnError:
        pass


def contents(chunks: list[Chunk]) -> list[str]:
    return [c.content for c in chunks]


def test_retrieve_returns_the_best_matching_chunk_first(client, corpus):
    kb, facts, _ = corpus
    chunks = client.retrieve(question="Who lights the lamp of the lighthouse?", dataset_ids=[kb.id])
    assert chunks and all(isinstance(c, Chunk) for c in chunks)
    top = chunks[0]
    assert top.content == LIGHTHOUSE
    assert top.document_id == facts.id
    assert top.dataset_id == kb.id


def test_similarity_scores_are_between_0_and_1(client, corpus):
    kb, _, _ = corpus
    chunks = client.retrieve(question="lighthouse bread satellite comet", dataset_ids=[kb.id], similarity_threshold=0)
    assert len(chunks) == 4
    for c in chunks:
        for score in (c.similarity, c.vector_similarity, c.term_similarity):
            assert 0 <= score <= 1


@pytest.mark.parametrize("weight", [0.3, 0.9])
def test_similarity_is_the_weighted_sum_of_vector_and_term_similarity(client, corpus, weight):
    kb, _, _ = corpus
    chunks = client.retrieve(question="sourdough fermentation starter", dataset_ids=[kb.id],
                             vector_similarity_weight=weight, similarity_threshold=0)
    assert chunks[0].content == BREAD
    for c in chunks:
        expected = weight * c.vector_similarity + (1 - weight) * c.term_similarity
        assert c.similarity == pytest.approx(expected, abs=1e-3)


def test_similarity_threshold_is_the_minimum_similarity(client, corpus):
    kb, _, _ = corpus
    everything = client.retrieve(question="the sun and the earth", dataset_ids=[kb.id], similarity_threshold=0)
    cutoff = sorted(c.similarity for c in everything)[len(everything) // 2]
    kept = client.retrieve(question="the sun and the earth", dataset_ids=[kb.id], similarity_threshold=cutoff)
    assert kept and all(c.similarity >= cutoff for c in kept)
    assert len(kept) < len(everything)


def test_page_size_is_the_maximum_number_of_chunks(client, corpus):
    kb, _, _ = corpus
    first = client.retrieve(question="lighthouse bread satellite comet", dataset_ids=[kb.id], similarity_threshold=0,
                            page=1, page_size=2)
    second = client.retrieve(question="lighthouse bread satellite comet", dataset_ids=[kb.id], similarity_threshold=0,
                             page=2, page_size=2)
    assert len(first) == 2 and len(second) == 2
    assert set(contents(first)).isdisjoint(contents(second))


def test_document_ids_limit_the_search(client, corpus):
    kb, _, space = corpus
    chunks = client.retrieve(question="lighthouse comet", dataset_ids=[kb.id], document_ids=[space.id],
                             similarity_threshold=0)
    assert contents(chunks) == [COMET]


def test_keyword_matching_can_be_enabled(client, corpus, fake_models):  # keywords come from the chat model
    kb, _, _ = corpus
    chunks = client.retrieve(question="geostationary satellite", dataset_ids=[kb.id], keyword=True)
    assert chunks[0].content == ORBIT


def test_metadata_condition_filters_on_meta_fields(client, corpus):
    kb, _, space = corpus
    condition = {"logic": "and", "conditions": [{"name": "author", "comparison_operator": "=", "value": "bob"}]}
    chunks = client.retrieve(question="lighthouse comet", dataset_ids=[kb.id], metadata_condition=condition,
                             similarity_threshold=0)
    assert {c.document_id for c in chunks} == {space.id}


def test_unavailable_chunks_are_not_retrieved(client):
    kb = client.create_dataset(name=unique("avail"))
    try:
        [doc] = kb.upload_documents([{"display_name": "a.txt", "blob": make_text(["a"])}])
        hidden = doc.add_chunk(content="The vault combination is kept in the blue notebook.")
        question = "Where is the vault combination kept?"
        assert [c.id for c in client.retrieve(question=question, dataset_ids=[kb.id])] == [hidden.id]
        hidden.update({"available": False})
        assert client.retrieve(question=question, dataset_ids=[kb.id]) == []
    finally:
        client.delete_datasets(ids=[kb.id])


def test_documents_with_different_embedding_models_are_an_error(client, fake_models):
    builtin = client.create_dataset(name=unique("builtin"))
    other = client.create_dataset(name=unique("fake-emb"), embedding_model=fake_models.embedding_model)
    try:
        for kb in (builtin, other):
            [doc] = kb.upload_documents([{"display_name": "x.txt", "blob": make_text(["x"])}])
            doc.add_chunk(content="A chunk about harbours.")
        with pytest.raises(CairnError) as e:
            client.retrieve(question="harbours", dataset_ids=[builtin.id, other.id])
        assert e.value.code == 400
    finally:
        client.delete_datasets(ids=[builtin.id, other.id])


def test_retrieving_from_an_unknown_knowledge_base_is_404(client):
    with pytest.raises(CairnError) as e:
        client.retrieve(question="anything", dataset_ids=["a" * 32])
    assert e.value.code == 404


def test_the_knowledge_base_ids_are_required(client):
    with pytest.raises(CairnError) as e:
        client.retrieve(question="anything", dataset_ids=[])
    assert e.value.code == 400
