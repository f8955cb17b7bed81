import assert from 'node:assert/strict';
import { cheapestBatches, EmbedScheduler, type RunBatch } from '../../../src/models/builtin/scheduler.js';

const DIMS = 2;

/** A stand-in for the ONNX run: vector = [text length, first token id], after a short delay. */
function recordingRun(batches: number[][][], delayMs = 5): RunBatch {
  return async (batch) => {
    batches.push(batch);
    await new Promise((r) => setTimeout(r, delayMs));
    return new Float32Array(batch.flatMap((ids) => [ids.length, ids[0]!]));
  };
}

const tokens = (lengths: number[]) => lengths.map((n, i) => Array.from({ length: n }, () => i + 100));

describe('models/builtin scheduler', () => {
  it('returns vectors in input order while batching by ascending length', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches), DIMS, { maxTexts: 2, maxTokens: 1000, window: 256 });
    const out = await scheduler.submit(tokens([5, 1, 3, 2]));
    assert.deepEqual(Array.from(out), [5, 100, 1, 101, 3, 102, 2, 103]);
    assert.deepEqual(batches.map((b) => b.map((ids) => ids.length)), [[1, 2], [3, 5]]);
  });

  it('caps padded tokens per batch', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches), DIMS, { maxTexts: 32, maxTokens: 10, window: 256 });
    await scheduler.submit(tokens([4, 4, 4, 6, 20]));
    // [4,4] = 8 padded tokens; adding a 4 makes 12 > 10; a single over-long text still runs alone
    assert.deepEqual(batches.map((b) => b.map((ids) => ids.length)), [[4, 4], [4], [6], [20]]);
  });

  it('lets a small request overtake a large one between batches', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches, 10), DIMS, { maxTexts: 2, maxTokens: 1000, window: 256 });
    const finished: string[] = [];
    const big = scheduler.submit(tokens(Array(20).fill(3))).then(() => finished.push('big'));
    await new Promise((r) => setTimeout(r, 15));
    const small = scheduler.submit(tokens([2])).then(() => finished.push('small'));
    await Promise.all([big, small]);
    assert.deepEqual(finished, ['small', 'big']);
    assert.ok(batches.findIndex((b) => b[0]!.length === 2) <= 3, 'the query ran within a couple of batches');
  });

  it('batches the texts of different requests together by length', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches), DIMS, { maxTexts: 4, maxTokens: 1000, window: 256 });
    // Each request alone would pad: [10, 50, 10, 50] and [50, 10, 50, 10] -> batches [10,10,50,50] twice.
    const a = tokens([10, 50, 10, 50]);
    const b = tokens([50, 10, 50, 10]).map((ids) => ids.map((id) => id + 10));
    const [va, vb] = await Promise.all([scheduler.submit(a), scheduler.submit(b)]);
    assert.deepEqual(batches.map((batch) => batch.map((ids) => ids.length)), [[10, 10, 10, 10], [50, 50, 50, 50]]);
    // Every vector went back to its own request and position.
    assert.deepEqual(Array.from(va), [10, 100, 50, 101, 10, 102, 50, 103]);
    assert.deepEqual(Array.from(vb), [50, 110, 10, 111, 50, 112, 10, 113]);
  });

  it('sorts together only the texts of the requests within the window', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches), DIMS, { maxTexts: 4, maxTokens: 1000, window: 4 });
    await Promise.all([scheduler.submit(tokens([10, 50, 10, 50])), scheduler.submit(tokens([50, 10, 50, 10]))]);
    // A window of 4 texts holds one request at a time: each is batched on its own (a window of 8 makes two batches).
    assert.deepEqual(batches.map((batch) => batch.map((ids) => ids.length)), [[10, 10], [50, 50], [10, 10], [50, 50]]);
  });

  it('cuts the texts sorted by length into the batches that cost the fewest padded tokens and runs', () => {
    const limits = { maxTexts: 5, maxTokens: 1000 };
    const cut = (lengths: number[]) => cheapestBatches(lengths, limits).map(([from, to]) => lengths.slice(from, to));
    // Padding a short text up to 50 tokens costs more than a run of its own...
    assert.deepEqual(cut([10, 50, 50, 50, 50]), [[10], [50, 50, 50, 50]]);
    // ...padding a nearly as long one costs less.
    assert.deepEqual(cut([48, 50, 50, 50, 50]), [[48, 50, 50, 50, 50]]);
    // Within the limits: at most 5 texts, at most 1,000 padded tokens; one text longer than that runs alone.
    assert.deepEqual(cut([60, 60, 60, 60, 60, 60]), [[60, 60, 60, 60, 60], [60]]);
    assert.deepEqual(cut([300, 300, 300, 300, 1200]), [[300, 300, 300], [300], [1200]]);
  });

  it('pads less than batching each request on its own', async () => {
    const lengths = (seed: number) => Array.from({ length: 32 }, (_, i) => 20 + ((i * 37 + seed * 11) % 60));
    const requests = Array.from({ length: 8 }, (_, r) => tokens(lengths(r)));
    const real = requests.flat().reduce((n, ids) => n + ids.length, 0);
    const padded = async (window: number) => {
      const batches: number[][][] = [];
      const scheduler = new EmbedScheduler(recordingRun(batches, 0), DIMS, { maxTexts: 16, maxTokens: 1024, window });
      await Promise.all(requests.map((t) => scheduler.submit(t)));
      return batches.reduce((n, b) => n + b.length * Math.max(...b.map((ids) => ids.length)), 0) / real;
    };
    const alone = await padded(32);
    const shared = await padded(256);
    assert.ok(shared < alone, `padding ${shared.toFixed(3)} with a window of 256 vs ${alone.toFixed(3)} per request`);
    assert.ok(shared < 1.05, `padded/real tokens ${shared.toFixed(3)}`);
  });

  it('advances the request being served in every batch, so no request waits for ever', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches, 1), DIMS, { maxTexts: 2, maxTokens: 1000, window: 256 });
    const finished: number[] = [];
    // The first request holds the longest texts; shorter ones keep arriving after it.
    const first = scheduler.submit(tokens([90, 90, 90, 90])).then(() => finished.push(0));
    const later = Array.from({ length: 6 }, (_, i) => scheduler.submit(tokens([5, 5, 5, 5, 5])).then(() => finished.push(i + 1)));
    await Promise.all([first, ...later]);
    assert.equal(finished[0], 0, `finish order ${finished.join(',')}`);
  });

  it('fails every request that had texts in a failed batch, and only those', async () => {
    let calls = 0;
    const scheduler = new EmbedScheduler(
      async (batch) => {
        await new Promise((r) => setTimeout(r, 1));
        if (calls++ === 0) throw new Error('model exploded');
        return new Float32Array(batch.length * DIMS);
      },
      DIMS,
      { maxTexts: 8, maxTokens: 1000, window: 256 },
    );
    const a = scheduler.submit(tokens([3, 3, 3]));
    const b = scheduler.submit(tokens([3, 3, 3]));
    await assert.rejects(a, /model exploded/);
    await assert.rejects(b, /model exploded/);
    assert.equal((await scheduler.submit(tokens([1, 2, 3]))).length, 6);
    assert.equal(scheduler.pendingRequests, 0);
  });

  it('fails only the request whose batch failed', async () => {
    let calls = 0;
    const scheduler = new EmbedScheduler(
      async (batch) => {
        if (calls++ === 0) throw new Error('model exploded');
        return new Float32Array(batch.length * DIMS);
      },
      DIMS,
      { maxTexts: 8, maxTokens: 1000, window: 256 },
    );
    await assert.rejects(scheduler.submit(tokens([1])), /model exploded/);
    assert.equal((await scheduler.submit(tokens([1, 2]))).length, 4);
  });
});
