import assert from 'node:assert/strict';
import { EmbedScheduler, type RunBatch } from '../../../src/models/builtin/scheduler.js';

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
    const scheduler = new EmbedScheduler(recordingRun(batches), DIMS, { maxTexts: 2, maxTokens: 1000 });
    const out = await scheduler.submit(tokens([5, 1, 3, 2]));
    assert.deepEqual(Array.from(out), [5, 100, 1, 101, 3, 102, 2, 103]);
    assert.deepEqual(batches.map((b) => b.map((ids) => ids.length)), [[1, 2], [3, 5]]);
  });

  it('caps padded tokens per batch', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches), DIMS, { maxTexts: 32, maxTokens: 10 });
    await scheduler.submit(tokens([4, 4, 4, 6, 20]));
    // [4,4] = 8 padded tokens; adding a 4 makes 12 > 10; a single over-long text still runs alone
    assert.deepEqual(batches.map((b) => b.map((ids) => ids.length)), [[4, 4], [4], [6], [20]]);
  });

  it('lets a small request overtake a large one between batches', async () => {
    const batches: number[][][] = [];
    const scheduler = new EmbedScheduler(recordingRun(batches, 10), DIMS, { maxTexts: 2, maxTokens: 1000 });
    const finished: string[] = [];
    const big = scheduler.submit(tokens(Array(20).fill(3))).then(() => finished.push('big'));
    await new Promise((r) => setTimeout(r, 15));
    const small = scheduler.submit(tokens([2])).then(() => finished.push('small'));
    await Promise.all([big, small]);
    assert.deepEqual(finished, ['small', 'big']);
    assert.ok(batches.findIndex((b) => b[0]!.length === 2) <= 3, 'the query ran within a couple of batches');
  });

  it('fails only the request whose batch failed', async () => {
    let calls = 0;
    const scheduler = new EmbedScheduler(
      async (batch) => {
        if (calls++ === 0) throw new Error('model exploded');
        return new Float32Array(batch.length * DIMS);
      },
      DIMS,
      { maxTexts: 8, maxTokens: 1000 },
    );
    await assert.rejects(scheduler.submit(tokens([1])), /model exploded/);
    assert.equal((await scheduler.submit(tokens([1, 2]))).length, 4);
  });
});
