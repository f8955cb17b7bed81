import assert from 'node:assert/strict';
import { ModelError, type ChatDelta } from '../../../src/models/types.js';

export async function collect(stream: AsyncIterable<ChatDelta>): Promise<ChatDelta[]> {
  const out: ChatDelta[] = [];
  for await (const d of stream) out.push(d);
  return out;
}

export function joined(deltas: ChatDelta[], kind: ChatDelta['kind']): string {
  return deltas.filter((d) => d.kind === kind).map((d) => d.text).join('');
}

/** Asserts `fn` rejects with a ModelError whose message matches every pattern. */
export async function rejectsModelError(fn: () => Promise<unknown>, ...patterns: RegExp[]): Promise<ModelError> {
  let caught: unknown;
  try {
    await fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ModelError, `expected a ModelError, got ${String(caught)}`);
  for (const p of patterns) assert.match(caught.message, p);
  return caught;
}

/** Measures how long `fn` takes, in ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T | undefined; error: unknown }> {
  const start = performance.now();
  try {
    const result = await fn();
    return { ms: performance.now() - start, result, error: undefined };
  } catch (error) {
    return { ms: performance.now() - start, result: undefined, error };
  }
}
