import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuiltinEmbeddingModel } from '../../../src/models/builtin/embedding-model.js';
import { locateModelFiles, MODEL_DIR_ENV } from '../../../src/models/builtin/locate.js';
import { poolAndNormalize } from '../../../src/models/builtin/pooling.js';
import { BUILTIN_EMBEDDING_MODEL_ID, MINILM_L6_V2 } from '../../../src/models/builtin/spec.js';
import { createModel } from '../../../src/models/registry.js';
import { cosine } from '../../../src/models/vector.js';
import { rejectsModelError } from './helpers.js';

describe('models/builtin embedding model (all-MiniLM-L6-v2, ONNX in a worker thread)', function () {
  this.timeout(120_000);
  let model: BuiltinEmbeddingModel;
  before(() => {
    model = new BuiltinEmbeddingModel({ threads: 2 });
  });

  it('is the Builtin factory default', () => {
    assert.equal(BUILTIN_EMBEDDING_MODEL_ID, 'sentence-transformers/all-MiniLM-L6-v2@Builtin');
    assert.equal(model.id, BUILTIN_EMBEDDING_MODEL_ID);
    assert.equal(createModel({ factory: 'Builtin', model_name: MINILM_L6_V2.name, model_type: 'embedding' }).id, BUILTIN_EMBEDDING_MODEL_ID);
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

  it('is deterministic and independent of batch composition and order', async () => {
    const text = 'Retrieval-augmented generation grounds answers in documents.';
    const [alone] = await model.embed([text]);
    const [again] = await model.embed([text]);
    assert.deepEqual(again, alone);
    const mixed = await model.embed(['short', 'a '.repeat(300), text, 'another sentence of medium length here']);
    assert.ok(cosine(mixed[2]!, alone!) > 0.9999);
  });

  it('keeps input order across sorted batches (more texts than one batch)', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `${'word '.repeat((i * 7) % 40)}item ${i}`);
    const all = await model.embed(texts);
    const singles = await Promise.all([5, 33, 69].map((i) => model.embed([texts[i]!])));
    [5, 33, 69].forEach((i, k) => assert.ok(cosine(all[i]!, singles[k]![0]!) > 0.9999, `text ${i}`));
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
    assert.throws(() => locateModelFiles(MINILM_L6_V2, { [MODEL_DIR_ENV]: empty }), /Builtin: CAIRN_EMBED_MODEL_DIR=.* must contain model\.onnx and tokenizer\.json/);
    const broken = new BuiltinEmbeddingModel({ files: { onnx: join(empty, 'model.onnx'), tokenizer: join(empty, 'tokenizer.json') } });
    await rejectsModelError(() => broken.embed(['x']), /^Builtin: /, /tokenizer\.json|model\.onnx/);
    assert.equal((await model.embed(['still works']))[0]!.length, 384, 'the shared worker survives a failed load');
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
