import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuiltinEmbeddingModel } from '../../../src/models/builtin/embedding-model.js';
import { locateModelFiles } from '../../../src/models/builtin/locate.js';
import { poolAndNormalize } from '../../../src/models/builtin/pooling.js';
import { BGE_SMALL_EN_V15, BUILTIN_EMBEDDING_MODEL_ID, MINILM_L6_V2, builtinSpecFor } from '../../../src/models/builtin/spec.js';
import { createModel } from '../../../src/models/registry.js';
import { cosine } from '../../../src/models/vector.js';
import { rejectsModelError } from './helpers.js';

describe('models/builtin embedding model specs', () => {
  it('finds each built-in embedder by its full name or a short alias, in any case', () => {
    for (const name of ['BAAI/bge-small-en-v1.5', 'bge-small-en-v1.5', 'BGE-SMALL-EN-V1.5']) assert.equal(builtinSpecFor(name), BGE_SMALL_EN_V15, name);
    for (const name of ['sentence-transformers/all-MiniLM-L6-v2', 'all-minilm-l6-v2']) assert.equal(builtinSpecFor(name), MINILM_L6_V2, name);
    assert.equal(builtinSpecFor('bge-large-en-v1.5'), undefined);
  });

  it('describes bge-small-en-v1.5 as BAAI trained it: CLS pooling, 512 tokens, 384 dims, a query instruction', () => {
    assert.equal(BGE_SMALL_EN_V15.pooling, 'cls');
    assert.equal(BGE_SMALL_EN_V15.maxTokens, 512);
    assert.equal(BGE_SMALL_EN_V15.dims, 384);
    assert.equal(BGE_SMALL_EN_V15.queryPrefix, 'Represent this sentence for searching relevant passages: ');
    assert.equal(MINILM_L6_V2.queryPrefix, '', 'MiniLM embeds queries as they are');
  });

  it('looks for each model in its own subfolder of CAIRN_EMBED_MODEL_DIR when there is one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-embed-'));
    const source = locateModelFiles(BGE_SMALL_EN_V15);
    mkdirSync(join(dir, 'bge-small-en-v1.5'));
    copyFileSync(source.tokenizer, join(dir, 'bge-small-en-v1.5', 'tokenizer.json'));
    copyFileSync(source.tokenizer, join(dir, 'bge-small-en-v1.5', 'model.onnx')); // only its presence matters here
    assert.equal(locateModelFiles(BGE_SMALL_EN_V15, dir).onnx, join(dir, 'bge-small-en-v1.5', 'model.onnx'));
    assert.throws(() => locateModelFiles(MINILM_L6_V2, dir), /CAIRN_EMBED_MODEL_DIR=.* must contain model\.onnx/);
  });
});

describe('models/builtin embedding model (bge-small-en-v1.5, ONNX in the embedding process)', function () {
  this.timeout(120_000);
  let model: BuiltinEmbeddingModel;
  before(() => {
    model = new BuiltinEmbeddingModel({ threads: 2 });
  });

  it("is the Builtin factory default, under RAGFlow's id", () => {
    assert.equal(BUILTIN_EMBEDDING_MODEL_ID, 'BAAI/bge-small-en-v1.5@Builtin');
    assert.equal(model.id, BUILTIN_EMBEDDING_MODEL_ID);
    assert.equal(createModel({ factory: 'Builtin', model_name: 'bge-small-en-v1.5', model_type: 'embedding' }).id, BUILTIN_EMBEDDING_MODEL_ID);
  });

  it('embeds a query with the instruction prefix and a passage without it', async () => {
    const text = 'how long do penguins live';
    const [asQuery] = await model.embed([text], 'query');
    const [prefixed] = await model.embed([BGE_SMALL_EN_V15.queryPrefix + text]);
    const [asPassage] = await model.embed([text]);
    assert.ok(cosine(asQuery!, prefixed!) > 0.9999, 'a query is embedded as prefix + text');
    assert.ok(cosine(asQuery!, asPassage!) < 0.99, 'a passage gets no prefix');
    assert.deepEqual(await model.embed([text]), await model.embed([text], 'passage'), 'passages are the default');
  });

  it('ranks the passage that answers a question first', async () => {
    const passages = [
      'In a mountain emergency in the United Kingdom, dial 999 and ask for the police, then mountain rescue.',
      'Mountain huts in the Alps open from late June to mid September and must be booked in advance.',
      'The emergency exit of the cable car station is on the ground floor, next to the ticket office.',
      'Mountain weather changes fast: carry a waterproof jacket, a map and a compass on every walk.',
    ];
    const questions: [string, number][] = [
      ['What number should I call in a mountain emergency?', 0],
      ['When are the alpine huts open?', 1],
      ['What should I pack for a hill walk?', 3],
    ];
    const vectors = await model.embed(passages);
    for (const [question, expected] of questions) {
      const [q] = await model.embed([question], 'query');
      const scores = vectors.map((v) => cosine(q!, v));
      const best = scores.indexOf(Math.max(...scores));
      assert.equal(best, expected, `${question}: scores ${scores.map((x) => x.toFixed(3)).join(', ')}`);
    }
  });

  it('returns 384-dimensional unit vectors', async () => {
    const vectors = await model.embed(['Hello world', '', 'A longer sentence with several different words in it.']);
    assert.equal(vectors.length, 3);
    for (const v of vectors) {
      assert.equal(v.length, 384);
      assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, `norm ${Math.hypot(...v)}`);
      assert.ok(v.every(Number.isFinite));
    }
  });

  it('scores paraphrases clearly above unrelated sentences', async () => {
    const cases: [string, string, string][] = [
      ['A man is playing a guitar.', 'Someone is playing an acoustic guitar.', 'The stock market fell sharply today.'],
      ['How do I reset my password?', 'What are the steps to change a forgotten password?', 'Penguins live in the southern hemisphere.'],
      ['The cat sleeps on the sofa.', 'A kitten is napping on the couch.', 'Interest rates were raised by the central bank.'],
    ];
    for (const [anchor, paraphrase, unrelated] of cases) {
      const [a, p, u] = await model.embed([anchor, paraphrase, unrelated]);
      const close = cosine(a!, p!);
      const far = cosine(a!, u!);
      assert.ok(close > far + 0.2, `${anchor}: paraphrase ${close.toFixed(3)} vs unrelated ${far.toFixed(3)}`);
      assert.ok(close > 0.5, `paraphrase similarity ${close.toFixed(3)}`);
    }
  });

  // The quantised model scales its activations per ONNX run (dynamic quantisation), so a text's vector
  // moves slightly with the texts batched beside it: measured cosine >= 0.996, far below any ranking effect.
  it('is deterministic, and nearly independent of batch composition and order', async () => {
    const text = 'Retrieval-augmented generation grounds answers in documents.';
    const [alone] = await model.embed([text]);
    const [again] = await model.embed([text]);
    assert.deepEqual(again, alone);
    const mixed = await model.embed(['short', 'a '.repeat(300), text, 'another sentence of medium length here']);
    assert.ok(cosine(mixed[2]!, alone!) > 0.99);
  });

  it('keeps input order across sorted batches (more texts than one batch)', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `${'word '.repeat((i * 7) % 40)}item ${i}`);
    const all = await model.embed(texts);
    const singles = await Promise.all([5, 33, 69].map((i) => model.embed([texts[i]!])));
    [5, 33, 69].forEach((i, k) => assert.ok(cosine(all[i]!, singles[k]![0]!) > 0.99, `text ${i}`));
  });

  it('truncates very long texts instead of failing', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(2000);
    const [v] = await model.embed([long]);
    assert.equal(v!.length, 384);
  });

  it('does not stall the event loop while embedding', async () => {
    const texts = Array.from({ length: 128 }, (_, i) => `sentence ${i} `.repeat(20));
    let last = performance.now();
    let worstGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    const start = performance.now();
    try {
      await model.embed(texts);
    } finally {
      clearInterval(timer);
    }
    const total = performance.now() - start;
    // Inference on the main thread would stall the loop for about the whole call; allow for a busy machine.
    assert.ok(worstGap < Math.max(200, total / 4), `event loop stalled for ${worstGap.toFixed(0)} ms of ${total.toFixed(0)} ms`);
  });

  it('answers a single query before a large request that was sent first', async () => {
    const big = Array.from({ length: 24 }, (_, i) => `document ${i} `.repeat(120)); // 6 runs of 4 x 256 tokens
    const finished: string[] = [];
    const bigDone = model.embed(big).then(() => finished.push('big'));
    await new Promise((r) => setTimeout(r, 50));
    const queryDone = model.embed(['what is retrieval?']).then(() => finished.push('query'));
    await Promise.all([bigDone, queryDone]);
    assert.deepEqual(finished, ['query', 'big']);
  });

  it('answers [] for no texts', async () => {
    assert.deepEqual(await model.embed([]), []);
  });

  it('names the provider and the fix when the model files are missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'cairn-embed-'));
    assert.throws(() => locateModelFiles(MINILM_L6_V2, empty), /Builtin: CAIRN_EMBED_MODEL_DIR=.* must contain model\.onnx and tokenizer\.json/);
    const broken = new BuiltinEmbeddingModel({ files: { onnx: join(empty, 'model.onnx'), tokenizer: join(empty, 'tokenizer.json') } });
    await rejectsModelError(() => broken.embed(['x']), /^Builtin: /, /tokenizer\.json|model\.onnx/);
    assert.equal((await model.embed(['still works']))[0]!.length, 384, 'the shared worker survives a failed load');
  });
});

describe('models/builtin embedding model (all-MiniLM-L6-v2, kept for existing datasets)', function () {
  this.timeout(120_000);
  const minilm = new BuiltinEmbeddingModel({ spec: MINILM_L6_V2, threads: 2 });

  it('is still served beside the default, by its own id, with no query prefix', async () => {
    assert.equal(createModel({ factory: 'Builtin', model_name: 'all-MiniLM-L6-v2', model_type: 'embedding' }).id, 'sentence-transformers/all-MiniLM-L6-v2@Builtin');
    const [query, passage] = [(await minilm.embed(['A man is playing a guitar.'], 'query'))[0]!, (await minilm.embed(['A man is playing a guitar.']))[0]!];
    assert.deepEqual(query, passage);
    const [p, u] = await minilm.embed(['Someone is playing an acoustic guitar.', 'The stock market fell sharply today.']);
    assert.ok(cosine(passage, p!) > cosine(passage, u!) + 0.2);
  });
});

describe('models/builtin pooling', () => {
  it('mean-pools over the attention mask and normalises', () => {
    // batch 1, seq 3, dims 2; the last token is padding
    const hidden = new Float32Array([1, 0, 3, 4, 100, 100]);
    const [x, y] = poolAndNormalize(hidden, [1n, 1n, 0n], 1, 3, 2, 'mean');
    assert.ok(Math.abs(x! - 2 / Math.hypot(2, 2)) < 1e-6 && Math.abs(y! - 2 / Math.hypot(2, 2)) < 1e-6);
  });

  it('cls-pools the first token', () => {
    const out = poolAndNormalize(new Float32Array([3, 4, 1, 1]), [1, 1], 1, 2, 2, 'cls');
    assert.deepEqual(Array.from(out).map((v) => +v.toFixed(6)), [0.6, 0.8]);
  });
});
