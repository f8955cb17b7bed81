import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { eventually, newUser, type Api } from './client.js';
import { harness } from './harness.js';
import { getDoc, upload, waitForRun } from './documents-helpers.js';
import { callGate, lastUserMessage, startFakes, type AnswerScript, type Fakes } from '../fakes/index.js';
import { useFakeProviders } from './providers-helpers.js';
import { createAgent, messageCanvas } from './agent-helpers.js';
import { makeDocx, makePdf } from '../fixtures/generate.js';

const RUN = randomBytes(3).toString('hex');

function template(name: string): { title: string; dsl: Record<string, any> } {
  const json = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'pipelines', `${name}.json`), 'utf8'));
  return json.dsl ? { title: json.title.en, dsl: json.dsl } : { title: 'Compiled', dsl: json };
}

/** The first words of the passage an Extractor call is about: the fake model's answers name them. */
const passageWords = (text: string) => text.replace(/^(Text|Section):\s*/i, '').split(/\s+/).slice(0, 3).join(' ');

/** The fake model as an Extractor's model: a summary, keywords, questions or facts, by the system prompt's ask. */
const extractorScript: AnswerScript = (messages) => {
  const system = messages[0]?.role === 'system' ? messages[0].content : '';
  const passage = passageWords(lastUserMessage(messages));
  if (/^Summar/i.test(system)) return { answer: `gist${RUN} of ${passage}` };
  if (/terms/i.test(system)) return { answer: `kw${RUN}, ${passage}` };
  if (/question/i.test(system)) return { answer: `What does q${RUN} say about ${passage}?` };
  if (/JSON object/i.test(system)) return { answer: `{"checked_by": "fact${RUN}"}` };
  return { answer: 'unexpected call' };
};

describe('pipeline runs over HTTP: datasets that ingest through a pipeline canvas', function () {
  this.timeout(300_000);
  let api: Api;
  let other: Api;
  let fakes: Fakes;
  let models: { chat: string; embedding: string };
  const pipelines = new Map<string, string>();
  let pdf: Buffer;
  let docx: Buffer;

  before(async () => {
    ({ api } = await newUser('pipeline-runs'));
    ({ api: other } = await newUser('pipeline-runs-other'));
    fakes = await startFakes({ answer: extractorScript });
    models = await useFakeProviders(api, fakes);
    for (const name of ['enrich_all', 'summarized_chunks', 'by_headings', 'compiled']) {
      const { title, dsl } = template(name);
      const res = await api.post('/agents', { title: `${title} ${RUN}`, canvas_type: 'Ingestion Pipeline', canvas_category: 'dataflow_canvas', dsl });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      pipelines.set(name, res.body.data.id);
    }
    pdf = await makePdf({ pages: 2, paragraphsPerPage: 3, title: 'Cairn field notes' });
    docx = await makeDocx();
  });
  after(() => fakes.close());
  afterEach(() => {
    fakes.openai.behaviour.answer = extractorScript;
    fakes.openai.behaviour.gate?.release();
    fakes.openai.behaviour.gate = undefined;
  });

  async function pipelineDataset(pipeline: string, name = pipeline): Promise<string> {
    const res = await api.post('/datasets', { name: `${name}-${RUN}-${randomBytes(2).toString('hex')}`, embedding_model: models.embedding, parse_type: 1, pipeline_id: pipelines.get(pipeline) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.pipeline_id, pipelines.get(pipeline));
    assert.equal(res.body.data.parse_type, 1);
    return res.body.data.id;
  }

  async function ingest(body: Record<string, unknown>) {
    return api.post('/documents/ingest', body);
  }

  async function chunksOf(ds: string, doc: string): Promise<any[]> {
    const res = await api.get(`/datasets/${ds}/documents/${doc}/chunks`, { page_size: 100 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.chunks;
  }

  async function ingestDone(ds: string, file: { name: string; bytes: Uint8Array }) {
    const doc = (await upload(api, ds, [file])).body.data[0].id;
    const res = await ingest({ doc_ids: [doc], run: '1' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data, true);
    const done = await waitForRun(api, ds, doc);
    assert.equal(done.run, 'DONE', done.progress_msg);
    return { doc, done, chunks: await chunksOf(ds, doc) };
  }

  for (const [name, file] of [['PDF', 'notes.pdf'], ['DOCX', 'letter.docx']] as const) {
    it(`enrich_all on a ${name}: every chunk gets the Extractors' keywords and questions, and the facts reach the document's meta_fields`, async () => {
      const ds = await pipelineDataset('enrich_all');
      const { doc, chunks } = await ingestDone(ds, { name: file, bytes: name === 'PDF' ? pdf : docx });
      assert.ok(chunks.length > 0);
      for (const c of chunks) {
        assert.ok(c.important_keywords.includes(`kw${RUN}`), JSON.stringify(c));
        assert.ok(c.questions.some((q: string) => q.includes(`q${RUN}`)), JSON.stringify(c));
      }
      assert.equal((await getDoc(api, ds, doc)).meta_fields.checked_by, `fact${RUN}`);
    });

    it(`summarized_chunks on a ${name}: each chunk is found by its summary's words, and retrieval returns its text`, async () => {
      const ds = await pipelineDataset('summarized_chunks');
      const { chunks } = await ingestDone(ds, { name: file, bytes: name === 'PDF' ? pdf : docx });
      assert.ok(chunks.length > 0);
      assert.ok(chunks.every((c) => c.content.startsWith(`gist${RUN} of `)), JSON.stringify(chunks.map((c) => c.content)));
      const found = await api.post('/retrieval', { dataset_ids: [ds], question: `gist${RUN}`, keyword: true, similarity_threshold: 0 });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.ok(found.body.data.chunks.length > 0);
      assert.ok(found.body.data.chunks.every((c: any) => !c.content.startsWith(`gist${RUN}`)), 'readers get the text, not the summary');
    });

    it(`by_headings on a ${name} and compiled on a ${name} ingest to DONE with chunks`, async () => {
      for (const pipeline of ['by_headings', 'compiled']) {
        const ds = await pipelineDataset(pipeline);
        const { chunks, done } = await ingestDone(ds, { name: file, bytes: name === 'PDF' ? pdf : docx });
        assert.ok(chunks.length > 0, `${pipeline}: ${done.progress_msg}`);
        assert.equal(done.chunk_count, chunks.length);
      }
    });
  }

  it('the General template is a pipeline equal to the naive chunk method: the same chunks from the same file', async () => {
    const created = await api.post('/agents', { template_id: 'general', title: `General ${RUN}` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data.canvas_category, 'dataflow_canvas');
    pipelines.set('general', created.body.data.id);
    const viaPipeline = await ingestDone(await pipelineDataset('general'), { name: 'notes.pdf', bytes: pdf });
    const naive = await api.post('/datasets', { name: `naive-${RUN}`, embedding_model: models.embedding });
    const naiveDoc = (await upload(api, naive.body.data.id, [{ name: 'notes.pdf', bytes: pdf }])).body.data[0].id;
    await api.post(`/datasets/${naive.body.data.id}/chunks`, { document_ids: [naiveDoc] });
    assert.equal((await waitForRun(api, naive.body.data.id, naiveDoc)).run, 'DONE');
    const texts = (chunks: any[]) => chunks.map((c) => c.content);
    assert.deepEqual(texts(viaPipeline.chunks), texts(await chunksOf(naive.body.data.id, naiveDoc)));
    assert.equal(viaPipeline.done.token_count, (await getDoc(api, naive.body.data.id, naiveDoc)).token_count);
  });

  it('a dataset of a chunk method ingests as its pipeline too: its run has logged steps', async () => {
    const ds = (await api.post('/datasets', { name: `method-${RUN}`, embedding_model: models.embedding, parser_config: { auto_keywords: 1 } })).body.data.id;
    const doc = (await upload(api, ds, [{ name: 'notes.pdf', bytes: pdf }])).body.data[0].id;
    assert.equal((await ingest({ doc_ids: [doc], run: '1' })).status, 200);
    assert.equal((await waitForRun(api, ds, doc)).run, 'DONE');
    const logs = (await api.get(`/datasets/${ds}/ingestions`, { document_id: doc })).body.data.logs;
    assert.deepEqual(logs[0].steps.map((s: any) => [s.component_id, s.status]), [['ChunkMethod:naive', 'DONE'], ['Enrichment:keywords_questions', 'DONE'], ['Index:chunks', 'DONE']]);
    assert.ok(logs[0].steps[2].output.chunks > 0);
  });

  it('the usual parse route runs the pipeline of a pipeline dataset; GET /agents/{id} of the pipeline lists the datasets using it', async () => {
    const ds = await pipelineDataset('summarized_chunks', 'parse-route');
    const detail = await api.get(`/agents/${pipelines.get('summarized_chunks')}`);
    assert.ok(detail.body.data.datasets.some((d: any) => d.id === ds), JSON.stringify(detail.body.data.datasets));
    // The canvas itself comes with them (the console draws it).
    assert.equal(detail.body.data.canvas_category, 'dataflow_canvas');
    assert.ok(detail.body.data.dsl.components['Extractor:Gist'], JSON.stringify(detail.body.data).slice(0, 300));
    const doc = (await upload(api, ds, [{ name: 'notes.pdf', bytes: pdf }])).body.data[0].id;
    const res = await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal((await waitForRun(api, ds, doc)).run, 'DONE');
    assert.ok((await chunksOf(ds, doc)).every((c) => c.content.startsWith(`gist${RUN}`)));
  });

  it('a rerun from a named step (after a prompt change) reuses the stored output of the steps before it: only the steps from it run', async () => {
    const { dsl } = template('summarized_chunks');
    const created = await api.post('/agents', { title: `rerun ${RUN}`, canvas_category: 'dataflow_canvas', dsl });
    pipelines.set('rerun', created.body.data.id);
    const ds = await pipelineDataset('rerun');
    const { doc } = await ingestDone(ds, { name: 'notes.pdf', bytes: pdf });
    const changed = structuredClone(dsl);
    changed.components['Extractor:Gist'].obj.params.sys_prompt = 'Summarize it again, shorter.';
    assert.equal((await api.put(`/agents/${pipelines.get('rerun')}`, { dsl: changed })).status, 200);
    fakes.openai.behaviour.answer = (messages) => ({ answer: `fresh${RUN} ${passageWords(lastUserMessage(messages))}` });
    const res = await ingest({ doc_ids: [doc], run: '1', from_step: 'Extractor:Gist', delete: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const done = await waitForRun(api, ds, doc);
    assert.equal(done.run, 'DONE', done.progress_msg);
    assert.ok((await chunksOf(ds, doc)).every((c) => c.content.startsWith(`fresh${RUN}`)));
    const logs = await api.get(`/datasets/${ds}/ingestions`, { document_id: doc });
    assert.equal(logs.status, 200, JSON.stringify(logs.body));
    const [rerun, first] = logs.body.data.logs;
    assert.deepEqual(first.steps.map((s: any) => [s.component_id, s.status]), [['Parser:Reader', 'DONE'], ['TokenChunker:Slicer', 'DONE'], ['Extractor:Gist', 'DONE'], ['Tokenizer:Index', 'DONE']]);
    assert.deepEqual(rerun.steps.map((s: any) => s.component_id), ['Extractor:Gist', 'Tokenizer:Index'], 'the Parser and the chunker did not run again');
    assert.equal(rerun.operation_status, 'DONE');
    assert.ok(first.steps[0].output.pages >= 1);
    const summary = await api.get(`/datasets/${ds}/ingestions/summary`);
    assert.equal(summary.body.data.doc_num, 1);
    assert.equal(summary.body.data.chunk_num, done.chunk_count);
    assert.equal(summary.body.data.status.DONE, 1);

    // RAGFlow's rerun route names the run by its log id and the component to start from, with the pipeline's DSL.
    assert.match(rerun.id, new RegExp(`^${doc}-\\d+$`));
    const differs = await api.post('/agents/rerun', { id: rerun.id, dsl: dsl, component_id: 'Tokenizer:Index' });
    assert.equal(differs.status, 400, 'a DSL other than the saved one is refused, not ignored');
    assert.match(differs.body.message, /differs from pipeline .* as saved: save it first/);
    const again = await api.post('/agents/rerun', { id: rerun.id, dsl: changed, component_id: 'Tokenizer:Index' });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal((await waitForRun(api, ds, doc)).run, 'DONE');
    const third = (await api.get(`/datasets/${ds}/ingestions`, { document_id: doc })).body.data.logs[0];
    assert.deepEqual(third.steps.map((s: any) => s.component_id), ['Tokenizer:Index'], 'POST /agents/rerun ran only the steps from the named component');
    assert.ok((await chunksOf(ds, doc)).every((c) => c.content.startsWith(`fresh${RUN}`)), 'the chunks come from the stored outputs of the steps before it');

    const unknown = await ingest({ doc_ids: [doc], run: '1', from_step: 'Extractor:Nope' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /has no step 'Extractor:Nope': its steps are Parser:Reader, TokenChunker:Slicer, Extractor:Gist, Tokenizer:Index/);
  });

  it('cancel (run "2") stops a run waiting on the model within 2 s: CANCEL, no chunks; a document not running cannot be cancelled', async () => {
    const ds = await pipelineDataset('summarized_chunks', 'cancel');
    // A file of its own: chunks whose answers no earlier test cached, so the model is asked.
    const fresh = await makePdf({ pages: 1, paragraphsPerPage: 3, title: `Cancel ${RUN}`, seed: 7 });
    const doc = (await upload(api, ds, [{ name: 'notes.pdf', bytes: fresh }])).body.data[0].id;
    const idle = await ingest({ doc_ids: [doc], run: '2' });
    assert.equal(idle.status, 400);
    assert.match(idle.body.message, /Cannot cancel a task that is not in RUNNING status/);
    const gate = callGate();
    fakes.openai.behaviour.gate = gate;
    assert.equal((await ingest({ doc_ids: [doc], run: '1' })).status, 200);
    await eventually(async () => gate.held > 0, 60_000, 50);
    const asked = Date.now();
    assert.equal((await ingest({ doc_ids: [doc], run: '2' })).status, 200);
    const stopped = await waitForRun(api, ds, doc, ['CANCEL', 'DONE', 'FAIL'], 10_000);
    assert.equal(stopped.run, 'CANCEL');
    assert.ok(Date.now() - asked < 2_000, `cancelled after ${Date.now() - asked} ms`);
    await eventually(async () => gate.held === 0, 5_000, 50);
    assert.equal((await chunksOf(ds, doc)).length, 0);
  });

  it('a worker killed during an Extractor resumes from that step: DONE once, every chunk summarised, no duplicates', async () => {
    const h = await harness();
    const { dsl } = template('summarized_chunks');
    const small = structuredClone(dsl);
    Object.assign(small.components['TokenChunker:Slicer'].obj.params, { chunk_token_size: 16, delimiters: ['\n'] });
    const created = await api.post('/agents', { title: `kill ${RUN}`, canvas_category: 'dataflow_canvas', dsl: small });
    pipelines.set('kill', created.body.data.id);
    const ds = await pipelineDataset('kill');
    const lines = Array.from({ length: 24 }, (_, i) => `Station k${RUN}n${i} keeps granite cairns.`);
    const doc = (await upload(api, ds, [{ name: 'stations.txt', bytes: Buffer.from(lines.join('\n')) }])).body.data[0].id;
    const station = (messages: any[]) => Number(/k[0-9a-f]+n(\d+) /.exec(lastUserMessage(messages))?.[1] ?? -1);
    const gate = callGate((messages) => station(messages) >= 8);
    fakes.openai.behaviour.gate = gate;
    await ingest({ doc_ids: [doc], run: '1' });
    await eventually(async () => gate.held > 0, 60_000, 50);
    await h.killWorker();
    gate.release();
    const done = await waitForRun(api, ds, doc, ['DONE', 'FAIL', 'CANCEL'], 150_000);
    assert.equal(done.run, 'DONE', done.progress_msg);
    const chunks = await chunksOf(ds, doc);
    assert.equal(chunks.length, 24);
    assert.equal(new Set(chunks.map((c) => c.id)).size, 24);
    assert.ok(chunks.every((c) => c.content.startsWith(`gist${RUN} of Station`)));
    const [log] = (await api.get(`/datasets/${ds}/ingestions`, { document_id: doc })).body.data.logs;
    assert.deepEqual(log.steps.map((s: any) => s.status), ['DONE', 'DONE', 'DONE', 'DONE']);
    assert.equal(log.steps[1].output.chunks, 24);
  });

  it("another workspace cannot ingest, cancel or read the logs of a pipeline dataset's documents", async () => {
    const ds = await pipelineDataset('summarized_chunks', 'private');
    const doc = (await upload(api, ds, [{ name: 'notes.pdf', bytes: pdf }])).body.data[0].id;
    for (const run of ['1', '2']) {
      const res = await other.post('/documents/ingest', { doc_ids: [doc], run });
      assert.equal(res.status, 404, JSON.stringify(res.body));
    }
    assert.equal((await getDoc(api, ds, doc)).run, 'UNSTART');
    assert.notEqual((await other.get(`/datasets/${ds}/ingestions`)).status, 200);
    assert.notEqual((await other.get(`/datasets/${ds}/ingestions/summary`)).status, 200);
  });

  describe('choosing a pipeline', () => {
    it('parse_type + pipeline_id are exclusive with chunk_method and parser_config, and come together', async () => {
      const both = await api.post('/datasets', { name: `x-${RUN}`, chunk_method: 'naive', parse_type: 1, pipeline_id: pipelines.get('enrich_all') });
      assert.equal(both.status, 400);
      assert.match(both.body.message, /chunk_method cannot be given with them/);
      const half = await api.post('/datasets', { name: `y-${RUN}`, pipeline_id: pipelines.get('enrich_all') });
      assert.equal(half.status, 400);
      assert.match(half.body.message, /required fields missing: parse_type/);
      const badHex = await api.post('/datasets', { name: `z-${RUN}`, parse_type: 1, pipeline_id: 'g'.repeat(32) });
      assert.match(badHex.body.message, /pipeline_id must be hexadecimal/);
      const short = await api.post('/datasets', { name: `w-${RUN}`, parse_type: 1, pipeline_id: 'abc' });
      assert.match(short.body.message, /pipeline_id must be 32 hex characters/);
    });

    it('an agent is not a pipeline, and another tenant\'s pipeline is not found', async () => {
      const agent = await createAgent(api, messageCanvas('hi'), `agent ${RUN}`);
      const res = await api.post('/datasets', { name: `a-${RUN}`, parse_type: 1, pipeline_id: agent });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /is an agent, not an ingestion pipeline/);
      const foreign = await other.post('/datasets', { name: `f-${RUN}`, parse_type: 1, pipeline_id: pipelines.get('enrich_all') });
      assert.equal(foreign.status, 404);
      const ingestForeign = await other.post('/documents/ingest', { doc_ids: ['0'.repeat(32)], run: '1' });
      assert.equal(ingestForeign.status, 404);
    });

    it('a file format the Parser has no setup for fails the document, naming the Parser and the formats it has', async () => {
      const { dsl } = template('summarized_chunks');
      const onlyPdf = structuredClone(dsl);
      const params = onlyPdf.components['Parser:Reader'].obj.params;
      for (const key of Object.keys(params)) if (key !== 'pdf' && key !== 'outputs') delete params[key];
      const created = await api.post('/agents', { title: `only pdf ${RUN}`, canvas_category: 'dataflow_canvas', dsl: onlyPdf });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      pipelines.set('only_pdf', created.body.data.id);
      const ds = await pipelineDataset('only_pdf');
      const doc = (await upload(api, ds, [{ name: 'letter.docx', bytes: docx }])).body.data[0].id;
      await ingest({ doc_ids: [doc], run: '1' });
      const failed = await waitForRun(api, ds, doc);
      assert.equal(failed.run, 'FAIL');
      assert.match(failed.progress_msg, /Parser 'Parser:Reader' has no setup for \.docx files: its formats are pdf \(pdf\)/);
    });
  });
});
