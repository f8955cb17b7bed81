"""Ingestion pipelines through the client: docs/pipelines.md "Running a pipeline".

A pipeline is a canvas of category ``dataflow_canvas`` (the fixture DSLs of test/fixtures/pipelines); a
dataset chooses it with ``parse_type`` + ``pipeline_id``; ``Client.ingest`` starts, cancels and reruns
(``from_step``); ``DataSet.list_ingestion_logs`` / ``get_ingestion_summary`` read the runs. Every test
runs in a workspace of its own whose default chat model (the Extractors' model) is the fake.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

from cairn import Agent, CairnError, Client, DataSet
from files import make_text
from support import long_text, unique, wait_for_run

FIXTURES = Path(__file__).resolve().parents[3] / "test" / "fixtures" / "pipelines"
# An agent canvas (Begin → Message), to tell agents from pipelines.
AGENT_DSL = {
    "components": {
        "begin": {"obj": {"component_name": "Begin", "params": {}}, "downstream": ["Message:Out"], "upstream": []},
        "Message:Out": {"obj": {"component_name": "Message", "params": {"content": ["hi"]}},
                        "downstream": [], "upstream": ["begin"]},
    },
    "globals": {}, "history": [], "path": [], "retrieval": [], "graph": {"nodes": [], "edges": []},
}
STEPS = ["Parser:Reader", "TokenChunker:Slicer", "Extractor:Gist", "Tokenizer:Index"]


def pipeline_dsl(name: str = "summarized_chunks") -> dict:
    """A fixture pipeline's DSL (a template wrapper's ``dsl``, or the bare DSL of compiled.json)."""
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    return data.get("dsl", data)


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def account(new_account):
    return new_account()


@pytest.fixture(scope="module")
def models(account, setup_fake_models):
    """The fake's models in the account's workspace; its chat model is the default (the Extractors' model)."""
    return setup_fake_models(account.client)


@pytest.fixture(scope="module")
def rag(account, models) -> Client:
    return account.client


@pytest.fixture(scope="module")
def pipeline(rag) -> Agent:
    """summarized_chunks: File → Parser → TokenChunker → Extractor (summary) → Tokenizer."""
    return rag.create_agent(title=unique("Summarized chunks"), dsl=pipeline_dsl(), canvas_type="Ingestion Pipeline",
                            canvas_category="dataflow_canvas")


@pytest.fixture
def make_pipeline_dataset(rag, models):
    """Creates datasets that ingest through a pipeline (the fake's embedding model) and deletes them afterwards."""
    made: list[str] = []

    def make(pipeline_id: str, **kwargs) -> DataSet:
        ds = rag.create_dataset(name=unique("pipeline-ds"), embedding_model=models.embedding_model,
                                parse_type=1, pipeline_id=pipeline_id, **kwargs)
        made.append(ds.id)
        return ds

    yield make
    for i in made:
        try:
            rag.delete_datasets(ids=[i])
        except CairnError:
            pass


def running_step(ds: DataSet, doc_id: str, component_id: str, timeout: float = 120) -> None:
    """Waits until the document's newest run is at ``component_id`` (its log shows the step RUNNING)."""
    deadline = time.monotonic() + timeout
    while True:
        logs = ds.list_ingestion_logs(document_id=doc_id)["logs"]
        if logs and any(s["component_id"] == component_id and s["status"] == "RUNNING" for s in logs[0]["steps"]):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{component_id} of {doc_id} not running after {timeout} s: {logs}")
        time.sleep(0.05)


def upload_one(ds: DataSet, name: str, blob: bytes):
    [doc] = ds.upload_documents([{"display_name": name, "blob": blob}])
    return doc


# ---------------------------------------------------------------------- a pipeline canvas
def test_create_agent_with_canvas_category_dataflow_creates_a_pipeline_stored_as_given(rag, pipeline):
    assert isinstance(pipeline, Agent)
    assert pipeline.canvas_category == "dataflow_canvas"
    got = rag.get_agent(pipeline.id)
    assert got.canvas_category == "dataflow_canvas"
    assert got.dsl.to_json() == pipeline_dsl()  # nothing filled in


def test_list_agents_filters_by_canvas_category(rag, pipeline):
    agent = rag.create_agent(title=unique("agent"), dsl=AGENT_DSL)
    pipelines = {a.id for a in rag.list_agents(canvas_category="dataflow_canvas", page_size=100)}
    agents = {a.id for a in rag.list_agents(canvas_category="agent_canvas", page_size=100)}
    both = {a.id for a in rag.list_agents(canvas_category=["agent_canvas", "dataflow_canvas"], page_size=100)}
    assert pipeline.id in pipelines and agent.id not in pipelines
    assert agent.id in agents and pipeline.id not in agents
    assert {pipeline.id, agent.id} <= both


def test_an_invalid_pipeline_dsl_is_400_naming_the_component(rag):
    dsl = pipeline_dsl()
    dsl["components"]["TokenChunker:Slicer"]["obj"]["params"]["chunk_token_size"] = 0
    with pytest.raises(CairnError) as e:
        rag.create_agent(title=unique("broken"), dsl=dsl, canvas_category="dataflow_canvas")
    assert e.value.code == 400
    assert "TokenChunker:Slicer" in e.value.message and "chunk_token_size" in e.value.message


# ---------------------------------------------------------------------- choosing a pipeline
def test_create_dataset_with_a_pipeline(make_pipeline_dataset, pipeline):
    ds = make_pipeline_dataset(pipeline.id)
    assert (ds.pipeline_id, ds.parse_type) == (pipeline.id, 1)


def test_a_pipeline_excludes_another_chunk_method_and_a_parser_config(rag, pipeline):
    for extra in ({"chunk_method": "manual"}, {"parser_config": {"chunk_token_num": 64}}):
        with pytest.raises(CairnError) as e:
            rag.create_dataset(name=unique("both"), parse_type=1, pipeline_id=pipeline.id, **extra)
        assert e.value.code == 400
        assert f"{next(iter(extra))} cannot be given with them" in e.value.message


def test_pipeline_id_without_parse_type_is_400(rag, pipeline):
    with pytest.raises(CairnError) as e:
        rag.create_dataset(name=unique("half"), pipeline_id=pipeline.id)
    assert e.value.code == 400
    assert "required fields missing: parse_type" in e.value.message


def test_an_agent_is_not_a_pipeline(rag):
    agent = rag.create_agent(title=unique("agent"), dsl=AGENT_DSL)
    with pytest.raises(CairnError) as e:
        rag.create_dataset(name=unique("agent-ds"), parse_type=1, pipeline_id=agent.id)
    assert e.value.code == 400
    assert "is an agent, not an ingestion pipeline" in e.value.message


def test_update_switches_a_dataset_to_a_pipeline_and_back(rag, models, pipeline):
    ds = rag.create_dataset(name=unique("switch"), embedding_model=models.embedding_model)
    try:
        assert ds.pipeline_id is None
        ds.update({"parse_type": 1, "pipeline_id": pipeline.id})
        assert (ds.pipeline_id, ds.parse_type) == (pipeline.id, 1)
        ds.update({"chunk_method": "naive"})
        assert (ds.pipeline_id, ds.parse_type) == (None, None)
    finally:
        rag.delete_datasets(ids=[ds.id])


# ---------------------------------------------------------------------- ingest, logs, summary, rerun
def test_ingest_runs_the_pipeline_logs_its_steps_and_reruns_from_a_step(rag, fake_llm, make_pipeline_dataset):
    # A pipeline of its own: the rerun changes its Extractor's prompt.
    dsl = pipeline_dsl()
    pipeline = rag.create_agent(title=unique("rerun"), dsl=dsl, canvas_category="dataflow_canvas")
    ds = make_pipeline_dataset(pipeline.id)
    word = unique("tor").replace("-", "")
    doc = upload_one(ds, "notes.txt", make_text([f"The {word} cairn marks the pass.", "Walkers add a stone each."]))
    fake_llm.script(word, f"gist {word}")
    try:
        assert rag.ingest([doc.id], run="1") is True
        done = wait_for_run(ds, doc.id)
        assert done.run == "DONE", done.progress_msg
        chunks = doc.list_chunks()
        assert chunks and all(c.content.startswith(f"gist {word}") for c in chunks)

        logs = ds.list_ingestion_logs(document_id=doc.id)
        assert logs["total"] == 1
        [log] = logs["logs"]
        assert (log["document_id"], log["document_name"], log["pipeline_id"]) == (doc.id, "notes.txt", pipeline.id)
        assert log["operation_status"] == "DONE"
        assert [(s["component_id"], s["status"]) for s in log["steps"]] == [(s, "DONE") for s in STEPS]
        assert log["steps"][1]["output"]["chunks"] == len(chunks)

        # A new prompt: the rerun from the Extractor reuses the Parser's and the chunker's stored output.
        changed = copy.deepcopy(dsl)
        changed["components"]["Extractor:Gist"]["obj"]["params"]["sys_prompt"] = "Summarize it again, shorter."
        rag.update_agent(pipeline.id, dsl=changed)
        fake_llm.script(word, f"fresh {word}")
        assert rag.ingest([doc.id], run="1", delete=True, from_step="Extractor:Gist") is True
        done = wait_for_run(ds, doc.id)
        assert done.run == "DONE", done.progress_msg
        assert all(c.content.startswith(f"fresh {word}") for c in doc.list_chunks())
        logs = ds.list_ingestion_logs(document_id=doc.id)
        assert logs["total"] == 2
        rerun, first = logs["logs"]  # newest first
        assert [s["component_id"] for s in rerun["steps"]] == ["Extractor:Gist", "Tokenizer:Index"]
        assert [s["component_id"] for s in first["steps"]] == STEPS
        assert rerun["run_seq"] > first["run_seq"]
        assert len(ds.list_ingestion_logs(document_id=doc.id, page=2, page_size=1)["logs"]) == 1

        summary = ds.get_ingestion_summary()
        assert (summary["doc_num"], summary["chunk_num"]) == (1, done.chunk_count)
        assert summary["token_num"] == done.token_count
        assert summary["status"]["DONE"] == 1
        assert set(summary["status"]) >= {"UNSTART", "RUNNING", "CANCEL", "DONE", "FAIL"}
    finally:
        fake_llm.unscript(word)


def test_from_step_must_be_a_step_of_the_pipeline(rag, pipeline, make_pipeline_dataset):
    ds = make_pipeline_dataset(pipeline.id)
    doc = upload_one(ds, "notes.txt", make_text(["Stones on stones."]))
    with pytest.raises(CairnError) as e:
        rag.ingest([doc.id], run="1", from_step="Extractor:Nope")
    assert e.value.code == 400
    assert "has no step 'Extractor:Nope'" in e.value.message


def test_parse_documents_runs_the_pipeline_of_a_pipeline_dataset(fake_llm, pipeline, make_pipeline_dataset):
    ds = make_pipeline_dataset(pipeline.id)
    word = unique("fell").replace("-", "")
    doc = upload_one(ds, "fell.txt", make_text([f"The {word} rises above the valley."]))
    fake_llm.script(word, f"gist {word}")
    try:
        [(doc_id, run, chunk_count, _tokens)] = ds.parse_documents([doc.id], timeout=180)
        assert (doc_id, run) == (doc.id, "DONE")
        assert chunk_count > 0
        assert all(c.content.startswith(f"gist {word}") for c in doc.list_chunks())
        assert [s["component_id"] for s in ds.list_ingestion_logs()["logs"][0]["steps"]] == STEPS
    finally:
        fake_llm.unscript(word)


def test_ingest_run_2_cancels_a_running_document_and_refuses_one_not_running(rag, pipeline, make_pipeline_dataset):
    ds = make_pipeline_dataset(pipeline.id)
    doc = upload_one(ds, "long.txt", long_text())  # hundreds of chunks, one model call each
    with pytest.raises(CairnError) as e:
        rag.ingest([doc.id], run="2")
    assert e.value.code == 400
    assert "Cannot cancel a task that is not in RUNNING status" in e.value.message
    rag.ingest([doc.id], run="1")
    running_step(ds, doc.id, "Extractor:Gist")  # the long step: one model call per chunk
    assert rag.ingest([doc.id], run="2") is True
    assert wait_for_run(ds, doc.id).run == "CANCEL"
    [log] = ds.list_ingestion_logs(document_id=doc.id)["logs"]
    assert log["operation_status"] == "CANCEL"
    assert [(s["component_id"], s["status"]) for s in log["steps"]][-1] == ("Extractor:Gist", "CANCEL")
    assert ds.get_ingestion_summary()["status"]["CANCEL"] == 1


def test_another_workspace_cannot_ingest_or_read_the_logs(rag, pipeline, make_pipeline_dataset, fresh_client):
    ds = make_pipeline_dataset(pipeline.id)
    doc = upload_one(ds, "notes.txt", make_text(["Private stones."]))
    for run in ("1", "2"):
        with pytest.raises(CairnError) as e:
            fresh_client.ingest([doc.id], run=run)
        assert e.value.code == 404
    assert ds.list_documents(id=doc.id)[0].run == "UNSTART"
    theirs = DataSet(fresh_client, {"id": ds.id})
    for read in (theirs.list_ingestion_logs, theirs.get_ingestion_summary):
        with pytest.raises(CairnError):
            read()


# ---------------------------------------------------------------------- request bodies (no server)
class Recorder:
    """Stands in for Client._send: records each request and answers a success envelope."""

    def __init__(self, data):
        self.data = data
        self.requests: list[tuple[str, str, dict]] = []

    def __call__(self, method, path, **kwargs):
        self.requests.append((method, path, kwargs))
        return FakeJSON({"code": 0, "data": self.data})


class FakeJSON:
    status_code = 200

    def __init__(self, body):
        self.body = body

    def json(self):
        return self.body


def test_create_dataset_with_a_pipeline_leaves_the_default_chunk_method_out(monkeypatch):
    offline = Client(api_key="k", base_url="127.0.0.1:1")
    rec = Recorder({"id": "d1", "name": "n"})
    monkeypatch.setattr(offline, "_send", rec)
    offline.create_dataset(name="n", parse_type=1, pipeline_id="a" * 32)
    offline.create_dataset(name="m")
    (_, path, with_pipeline), (_, _, plain) = rec.requests
    assert path == "/datasets"
    assert with_pipeline["json"] == {"name": "n", "permission": "me", "parse_type": 1, "pipeline_id": "a" * 32}
    assert plain["json"]["chunk_method"] == "naive" and "pipeline_id" not in plain["json"]


def test_ingest_sends_run_as_text_and_from_step_only_when_given(monkeypatch):
    offline = Client(api_key="k", base_url="127.0.0.1:1")
    rec = Recorder(True)
    monkeypatch.setattr(offline, "_send", rec)
    assert offline.ingest(["d1"]) is True
    offline.ingest(("d1", "d2"), run=2)
    offline.ingest(["d1"], delete=True, from_step="Extractor:Gist")
    assert [(m, p) for m, p, _ in rec.requests] == [("POST", "/documents/ingest")] * 3
    assert [r[2]["json"] for r in rec.requests] == [
        {"doc_ids": ["d1"], "run": "1", "delete": False},
        {"doc_ids": ["d1", "d2"], "run": "2", "delete": False},
        {"doc_ids": ["d1"], "run": "1", "delete": True, "from_step": "Extractor:Gist"},
    ]


def test_ingestion_logs_and_summary_read_the_dataset_routes(monkeypatch):
    offline = Client(api_key="k", base_url="127.0.0.1:1")
    rec = Recorder({"total": 3, "logs": [{"id": "l1", "steps": []}]})
    monkeypatch.setattr(offline, "_send", rec)
    ds = DataSet(offline, {"id": "ds1"})
    assert ds.list_ingestion_logs(document_id="d1", page=2, page_size=1) == {"total": 3, "logs": [{"id": "l1", "steps": []}]}
    assert ds.list_ingestion_logs() == {"total": 3, "logs": [{"id": "l1", "steps": []}]}
    ds.get_ingestion_summary()
    assert [(m, p, k.get("params")) for m, p, k in rec.requests] == [
        ("GET", "/datasets/ds1/ingestions", {"document_id": "d1", "page": 2, "page_size": 1}),
        ("GET", "/datasets/ds1/ingestions", {"document_id": None, "page": 1, "page_size": 30}),
        ("GET", "/datasets/ds1/ingestions/summary", None),
    ]
