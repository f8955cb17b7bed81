import assert from 'node:assert/strict';
import { cachedCalls, callKey, type EnrichmentCall } from '../../../src/enrichment/cached-calls.js';
import type { EnrichmentRepo } from '../../../src/store/enrichment.js';
import type { ChatMessage, ChatModel } from '../../../src/models/types.js';

function memoryCache() {
  const values = new Map<string, string>();
  const repo = {
    cached: async (keys: string[]) => new Map(keys.filter((k) => values.has(k)).map((k) => [k, values.get(k)!])),
    remember: async (entries: { key: string; value: string }[]) => {
      for (const e of entries) if (!values.has(e.key)) values.set(e.key, e.value);
    },
  };
  return { repo: repo as unknown as EnrichmentRepo, values };
}

function echoModel(opts: { failOn?: string; delayMs?: number } = {}) {
  const asked: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const model = {
    id: 'echo@Test',
    async complete(messages: ChatMessage[]) {
      const text = messages.at(-1)!.content;
      asked.push(text);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, opts.delayMs ?? 1));
      inFlight--;
      if (text === opts.failOn) throw new Error(`model refused ${text}`);
      return `answer to ${text}`;
    },
    stream() {
      throw new Error('not used');
    },
  } as unknown as ChatModel;
  return { model, asked, maxInFlight: () => maxInFlight };
}

const call = (text: string): EnrichmentCall => ({ kind: 'test', messages: [{ role: 'user', content: text }] });

describe('cached enrichment calls', () => {
  it('answers in order, counting tokens for calls made now', async () => {
    const { repo } = memoryCache();
    const { model } = echoModel();
    const results = await cachedCalls(repo, model, [call('a'), call('b')], { tenantId: 't1', concurrency: 2 });
    assert.deepEqual(results.map((r) => r.text), ['answer to a', 'answer to b']);
    assert.ok(results.every((r) => !r.cached && r.tokens > 0));
  });

  it('never asks the model again what it answered before (same model, same call)', async () => {
    const { repo } = memoryCache();
    const first = echoModel();
    await cachedCalls(repo, first.model, [call('a'), call('b')], { tenantId: 't1', concurrency: 2 });
    const second = echoModel();
    const results = await cachedCalls(repo, second.model, [call('a'), call('b'), call('c')], { tenantId: 't1', concurrency: 2 });
    assert.deepEqual(second.asked, ['c']);
    assert.deepEqual(results.map((r) => r.cached), [true, true, false]);
    assert.equal(results[0]!.tokens, 0);
  });

  it('keys differ by tenant, model, kind and options', () => {
    const base = call('a');
    assert.equal(callKey('t1', 'm1', base), callKey('t1', 'm1', call('a')));
    assert.notEqual(callKey('t1', 'm1', base), callKey('t2', 'm1', base));
    assert.notEqual(callKey('t1', 'm1', base), callKey('t1', 'm2', base));
    assert.notEqual(callKey('t1', 'm1', base), callKey('t1', 'm1', { ...base, kind: 'other' }));
    assert.notEqual(callKey('t1', 'm1', base), callKey('t1', 'm1', { ...base, options: { temperature: 0 } }));
  });

  it("another tenant's identical call is asked again, not answered from the first tenant's cache", async () => {
    const { repo } = memoryCache();
    await cachedCalls(repo, echoModel().model, [call('a')], { tenantId: 't1', concurrency: 1 });
    const other = echoModel();
    const [result] = await cachedCalls(repo, other.model, [call('a')], { tenantId: 't2', concurrency: 1 });
    assert.deepEqual(other.asked, ['a']);
    assert.equal(result!.cached, false);
  });

  it('runs at most `concurrency` calls at once', async () => {
    const { repo } = memoryCache();
    const m = echoModel({ delayMs: 5 });
    await cachedCalls(repo, m.model, 'abcdefghij'.split('').map(call), { tenantId: 't1', concurrency: 3 });
    assert.equal(m.maxInFlight(), 3);
  });

  it('a failing call rejects, and the answers that arrived before it are kept for the retry', async () => {
    const { repo, values } = memoryCache();
    const m = echoModel({ failOn: 'c' });
    await assert.rejects(cachedCalls(repo, m.model, [call('a'), call('b'), call('c')], { tenantId: 't1', concurrency: 1 }), /model refused c/);
    assert.equal(values.size, 2);
    const retry = echoModel();
    await cachedCalls(repo, retry.model, [call('a'), call('b'), call('c')], { tenantId: 't1', concurrency: 1 });
    assert.deepEqual(retry.asked, ['c']);
  });

  it('holds the built-in chat model to the call\'s schema; other models answer the prompt\'s format', async () => {
    const seen: { id: string; schema: unknown }[] = [];
    const modelNamed = (id: string) =>
      ({ id, complete: async (_m: ChatMessage[], o: { json_schema?: unknown }) => (seen.push({ id, schema: o.json_schema }), '["a"]'), stream: () => { throw new Error('not used'); } }) as unknown as ChatModel;
    const schema = { type: 'array', items: { type: 'string' }, maxItems: 2 };
    for (const id of ['SmolLM2-135M-Instruct@Builtin', 'gpt@x@OpenAI-API-Compatible']) {
      await cachedCalls(memoryCache().repo, modelNamed(id), [{ ...call('k'), builtinSchema: schema }], { tenantId: 't1', concurrency: 1 });
    }
    assert.deepEqual(seen, [{ id: 'SmolLM2-135M-Instruct@Builtin', schema }, { id: 'gpt@x@OpenAI-API-Compatible', schema: undefined }]);
  });
});
