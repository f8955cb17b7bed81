import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { harness } from './harness.js';
import { eventually, newUser, type Api } from './client.js';
import { getDoc, upload, waitForRun } from './documents-helpers.js';
import { callGate, lastUserMessage, startFakes, type AnswerScript, type FakeMessage, type Fakes } from '../fakes/index.js';
import { useFakeProviders } from './providers-helpers.js';
import { loadConfig } from '../../src/config.js';

/** A word unique to this run, so no other test's cached answers are reused. */
const RUN = randomBytes(3).toString('hex');

/** Each line (one chunk: at most 16 tokens, as the datasets' chunk_token_num) names its station with a code word the model's answers are built from. */
function stationsText(count: number, tag: string): Buffer {
  const lines = Array.from({ length: count }, (_, i) => `Station ${code(tag, i)} keeps granite cairns.`);
  return Buffer.from(lines.join('\n'));
}
const code = (tag: string, i: number) => `st${RUN}${tag}${i}`;
/** The number of the station a call asks about, if it is one of `tag`'s. */
const stationOf = (messages: FakeMessage[], tag: string): number | undefined => {
  const n = new RegExp(`Station st${RUN}${tag}(\\d+) `).exec(lastUserMessage(messages))?.[1];
  return n === undefined ? undefined : Number(n);
};
/** Chunks per round of enrichment calls, one progress report each (DEFAULT_BATCH in src/enrichment/keywords.ts). */
const ENRICH_BATCH = 16;
/** A word that appears in the generated questions of a chunk only, never in its text. */
const alias = (codeWord: string) => `moth${codeWord.split('').reverse().join('')}`;

/**
 * The fake chat model: keyword and question answers in the messy shapes models give (numbering, quotes,
 * duplicates, an introduction line, more than asked), built from the chunk's code word. A passage with
 * "unusable" gets an answer with nothing usable in it.
 */
const enrichmentScript: AnswerScript = (messages) => {
  const system = messages[0]?.content ?? '';
  const passage = lastUserMessage(messages);
  const word = /Station (\S+)/.exec(passage)?.[1] ?? 'none';
  if (passage.includes('unusable')) return { answer: '{"error": "I cannot do that"}' };
  if (/search keywords/.test(system)) return { answer: `1. "${word} cairn"\n2. ${word} CAIRN\n3. Ridge logbook\n4. granite` };
  if (/questions/.test(system)) return { answer: `Here are the questions:\n1. Which ${alias(word)} lantern glows violet?\n2) Who guards ${word}?\n3. What else?` };
  return { answer: 'unexpected call' };
};

describe('auto_keywords and auto_questions over HTTP', function () {
  this.timeout(300_000);
  let api: Api;
  let fakes: Fakes;
  let models: { chat: string; embedding: string };

  const chatCalls = () => fakes.openai.requests.filter((r) => r.path === '/v1/chat/completions');

  before(async () => {
    api = (await newUser('enrich')).api;
    fakes = await startFakes({ answer: enrichmentScript });
    models = await useFakeProviders(api, fakes);
  });
  after(() => fakes.close());
  afterEach(() => {
    fakes.openai.behaviour.failure = undefined;
    fakes.openai.behaviour.answer = enrichmentScript;
    fakes.openai.behaviour.gate?.release();
    fakes.openai.behaviour.gate = undefined;
  });

  async function dataset(name: string, parserConfig: Record<string, unknown>): Promise<string> {
    const res = await api.post('/datasets', {
      name: `${name}-${RUN}`,
      embedding_model: models.embedding,
      parser_config: { chunk_token_num: 16, delimiter: '\n', ...parserConfig },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.id;
  }

  async function parse(ds: string, doc: string) {
    const res = await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }

  async function chunksOf(ds: string, doc: string): Promise<any[]> {
    const res = await api.get(`/datasets/${ds}/documents/${doc}/chunks`, { page_size: 100 });
    assert.equal(res.status, 200);
    return res.body.data.chunks;
  }

  describe('on a parsed document', () => {
    let ds: string;
    let doc: string;
    let callsAfterFirstParse: number;

    before(async () => {
      ds = await dataset('keywords', { auto_keywords: 3, auto_questions: 2 });
      doc = (await upload(api, ds, [{ name: 'stations.txt', bytes: stationsText(6, 'a') }])).body.data[0].id;
      fakes.openai.clear();
      await parse(ds, doc);
      const done = await waitForRun(api, ds, doc);
      assert.equal(done.run, 'DONE', done.progress_msg);
      callsAfterFirstParse = chatCalls().length;
    });

    it('stores the generated keywords and questions on every chunk, cleaned, deduplicated and capped', async () => {
      const chunks = await chunksOf(ds, doc);
      assert.equal(chunks.length, 6);
      for (const c of chunks) {
        const word = /Station (\S+)/.exec(c.content)![1]!;
        assert.deepEqual(c.important_keywords, [`${word} cairn`, 'Ridge logbook', 'granite']);
        assert.deepEqual(c.questions, [`Which ${alias(word)} lantern glows violet?`, `Who guards ${word}?`]);
      }
    });

    it('asks the chat model once per chunk for keywords and once for questions', () => {
      assert.equal(callsAfterFirstParse, 12);
      const prompts = chatCalls().map((r) => r.body.messages[0].content as string);
      assert.equal(prompts.filter((p) => /3 most important keywords/.test(p)).length, 6);
      assert.equal(prompts.filter((p) => /Give 2 questions/.test(p)).length, 6);
    });

    it('retrieval finds a chunk by the words of its generated questions alone', async () => {
      const word = code('a', 4);
      const res = await api.post('/retrieval', { dataset_ids: [ds], question: alias(word), similarity_threshold: 0.1 });
      assert.equal(res.status, 200);
      const [top] = res.body.data.chunks;
      assert.ok(top, 'a chunk is found');
      assert.match(top.content, new RegExp(`Station ${word} `));
      assert.ok(top.term_similarity > 0, 'the question words match the chunk');
      assert.ok(!res.body.data.chunks.slice(1).some((c: any) => c.term_similarity >= top.term_similarity), 'no other chunk matches as well');
    });

    it('a re-parse replaces the chunks and makes no new model calls: every answer comes from the cache', async () => {
      await parse(ds, doc);
      const done = await waitForRun(api, ds, doc);
      assert.equal(done.run, 'DONE', done.progress_msg);
      assert.equal(chatCalls().length, callsAfterFirstParse);
      const chunks = await chunksOf(ds, doc);
      assert.equal(chunks.length, 6);
      assert.ok(chunks.every((c) => c.important_keywords.length === 3 && c.questions.length === 2));
    });
  });

  it('an unusable answer leaves the chunk without keywords and the document DONE', async () => {
    const ds = await dataset('unusable', { auto_keywords: 4 });
    const doc = (await upload(api, ds, [{ name: 'u.txt', bytes: Buffer.from(`Station ${code('u', 0)} is unusable.\nStation ${code('u', 1)} keeps granite cairns.`) }])).body.data[0].id;
    await parse(ds, doc);
    const done = await waitForRun(api, ds, doc);
    assert.equal(done.run, 'DONE', done.progress_msg);
    const chunks = await chunksOf(ds, doc);
    const byWord = new Map(chunks.map((c) => [/Station (\S+)/.exec(c.content)![1], c]));
    assert.deepEqual(byWord.get(code('u', 0)).important_keywords, []);
    assert.deepEqual(byWord.get(code('u', 1)).important_keywords, [`${code('u', 1)} cairn`, 'Ridge logbook', 'granite']);
  });

  it('shows the stage in the document progress while generating: "Generating keywords and questions: n/N chunks"', async () => {
    const ds = await dataset('progress', { auto_keywords: 2, auto_questions: 1 });
    const doc = (await upload(api, ds, [{ name: 'p.txt', bytes: stationsText(40, 'p') }])).body.data[0].id;
    // The model answers the first round of chunks and holds the next until the test has seen the progress.
    const gate = callGate((messages) => (stationOf(messages, 'p') ?? 0) >= ENRICH_BATCH);
    fakes.openai.behaviour.gate = gate;
    await parse(ds, doc);
    const seen = new Map<string, number>();
    const watch = async () => {
      const d = await getDoc(api, ds, doc);
      if (/Generating/.test(d.progress_msg)) seen.set(d.progress_msg, d.progress);
      return d;
    };
    await eventually(async () => gate.held > 0 && (await watch()).progress_msg === `Generating keywords and questions: ${ENRICH_BATCH}/40 chunks`, 60_000, 50);
    gate.release();
    const done = await eventually(async () => {
      const d = await watch();
      return ['DONE', 'FAIL', 'CANCEL'].includes(d.run) ? d : undefined;
    }, 120_000, 50);
    assert.equal(done.run, 'DONE', done.progress_msg);
    const midway = [...seen].filter(([msg]) => {
      const m = /^Generating keywords and questions: (\d+)\/40 chunks$/.exec(msg);
      return m && Number(m[1]) > 0 && Number(m[1]) < 40;
    });
    assert.ok(midway.length > 0, `progress seen: ${[...seen.keys()].join(' | ')}`);
    for (const [, progress] of midway) assert.ok(progress > 0.45 && progress < 0.75, `progress ${progress} in the stage's band`);
  });

  it('retries a model that fails for a while, then finishes', async () => {
    const ds = await dataset('flaky', { auto_keywords: 2 });
    const doc = (await upload(api, ds, [{ name: 'f.txt', bytes: stationsText(3, 'f') }])).body.data[0].id;
    fakes.openai.behaviour.failure = { status: 503, path: '/v1/chat/completions', times: 2 };
    await parse(ds, doc);
    const done = await waitForRun(api, ds, doc);
    assert.equal(done.run, 'DONE', done.progress_msg);
    assert.ok((await chunksOf(ds, doc)).every((c) => c.important_keywords.length === 2));
  });

  it('fails the document with the reason when the model keeps failing', async () => {
    const ds = await dataset('failing', { auto_questions: 1 });
    const doc = (await upload(api, ds, [{ name: 'x.txt', bytes: stationsText(2, 'x') }])).body.data[0].id;
    fakes.openai.behaviour.failure = { status: 500, path: '/v1/chat/completions', message: 'the GPU is on fire' };
    fakes.openai.clear();
    await parse(ds, doc);
    const done = await waitForRun(api, ds, doc, ['DONE', 'FAIL', 'CANCEL'], 120_000);
    assert.equal(done.run, 'FAIL');
    assert.match(done.progress_msg, /^Failed: generating questions with .*fake-chat.* failed: .*server error \(HTTP 500\).*the GPU is on fire/);
    assert.ok(chatCalls().length >= 5, `retried with backoff (${chatCalls().length} calls)`);
    assert.equal(done.chunk_count, 0);
  });

  it('fails at once, without retrying, when the model refuses the request (wrong key, unknown model)', async () => {
    const ds = await dataset('refused', { auto_keywords: 2 });
    const doc = (await upload(api, ds, [{ name: 'r.txt', bytes: stationsText(1, 'r') }])).body.data[0].id;
    fakes.openai.behaviour.failure = { status: 401, path: '/v1/chat/completions', message: 'bad key' };
    fakes.openai.clear();
    await parse(ds, doc);
    const done = await waitForRun(api, ds, doc);
    assert.equal(done.run, 'FAIL');
    assert.match(done.progress_msg, /generating keywords with .* failed: .*authentication failed \(HTTP 401\)/);
    assert.equal(chatCalls().length, 1);
  });

  it('uses parser_config.llm_id as the chat model, and fails clearly when it does not exist', async () => {
    const ds = await dataset('llm-id', { auto_keywords: 2, llm_id: 'no-such-chat@OpenAI-API-Compatible' });
    const doc = (await upload(api, ds, [{ name: 'l.txt', bytes: stationsText(1, 'l') }])).body.data[0].id;
    await parse(ds, doc);
    const done = await waitForRun(api, ds, doc);
    assert.equal(done.run, 'FAIL');
    assert.match(done.progress_msg, /generating keywords needs a chat model .*no-such-chat/);
  });

  it('stopping the parse while generating cancels it promptly: CANCEL, no chunks, no more model calls', async () => {
    const ds = await dataset('stop', { auto_questions: 3 });
    const doc = (await upload(api, ds, [{ name: 's.txt', bytes: stationsText(60, 's') }])).body.data[0].id;
    // The model holds every call: the stop comes while the step waits on it, however slow the machine.
    const gate = callGate((messages) => stationOf(messages, 's') !== undefined);
    fakes.openai.behaviour.gate = gate;
    fakes.openai.clear();
    await parse(ds, doc);
    const slots = loadConfig().enrichConcurrency;
    await eventually(async () => gate.held === slots && /Generating questions/.test((await getDoc(api, ds, doc)).progress_msg), 60_000, 50);
    const stopped = await api.delete(`/datasets/${ds}/chunks`, { document_ids: [doc] });
    assert.equal(stopped.status, 200);
    const t0 = Date.now();
    const end = await waitForRun(api, ds, doc, ['CANCEL', 'DONE', 'FAIL'], 30_000);
    assert.equal(end.run, 'CANCEL', end.progress_msg);
    assert.ok(Date.now() - t0 < 10_000, 'the cancel is prompt');
    // The step notices within a second (it watches the run) and aborts the calls in flight.
    await eventually(async () => gate.held === 0, 10_000, 50).catch(() => assert.fail(`${gate.held} model calls still open 10 s after the cancel`));
    // From now on the model answers at once: a step still running would ask on.
    gate.release();
    const asked = chatCalls().length;
    assert.equal(asked, slots, 'only the calls open at the stop were made');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(chatCalls().length, asked, 'no model call after the cancel');
    assert.equal((await chunksOf(ds, doc)).length, 0);
  });

  it('a worker killed while generating resumes without asking again what was answered', async () => {
    const h = await harness();
    const ds = await dataset('kill', { auto_keywords: 2, auto_questions: 1 });
    const doc = (await upload(api, ds, [{ name: 'k.txt', bytes: stationsText(48, 'k') }])).body.data[0].id;
    // The model answers the first round of chunks and holds the next: the worker dies with those calls open.
    const gate = callGate((messages) => (stationOf(messages, 'k') ?? 0) >= ENRICH_BATCH);
    fakes.openai.behaviour.gate = gate;
    fakes.openai.clear();
    await parse(ds, doc);
    // Every slot waits on a held call, after the first round's answers were stored.
    const slots = loadConfig().enrichConcurrency;
    await eventually(async () => gate.held === slots && (await getDoc(api, ds, doc)).progress_msg === `Generating keywords and questions: ${ENRICH_BATCH}/48 chunks`, 60_000, 50);
    const askedBeforeKill = chatCalls().length;
    assert.equal(askedBeforeKill, 2 * ENRICH_BATCH + slots);
    await h.killWorker();
    // The new worker's calls are answered at once.
    gate.release();
    const done = await waitForRun(api, ds, doc, ['DONE', 'FAIL', 'CANCEL'], 150_000);
    assert.equal(done.run, 'DONE', done.progress_msg);
    const asked = chatCalls().map((r) => JSON.stringify(r.body.messages));
    const distinct = new Set(asked).size;
    assert.equal(distinct, 96, 'every chunk asked for keywords and questions');
    assert.ok(askedBeforeKill < 96, 'the kill came before the work was done');
    // Only calls in flight when the worker died (at most CAIRN_ENRICH_CONCURRENCY) are asked twice.
    assert.ok(asked.length - distinct <= 4, `${asked.length - distinct} calls repeated`);
    const chunks = await chunksOf(ds, doc);
    assert.equal(chunks.length, 48);
    assert.ok(chunks.every((c) => c.important_keywords.length === 2 && c.questions.length === 1));
  });
});
