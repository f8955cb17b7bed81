import assert from 'node:assert/strict';
import { instrumentModel } from '../../../src/models/call-metrics.js';
import { createModel } from '../../../src/models/registry.js';
import { ModelError, type ChatDelta, type ChatMessage, type ChatModel, type ChatOptions, type EmbeddingModel } from '../../../src/models/types.js';
import { processMetrics } from '../../../src/observability/metrics.js';
import { startFakeOpenAI } from '../../fakes/index.js';
import { parsePrometheusText, sampleSum, sampleValue } from '../../support/prometheus-text.js';

let seq = 0;
/** A provider label no other test uses, so counts start at zero. */
const freshProvider = () => `test-provider-${process.pid}-${++seq}`;

async function metrics() {
  return parsePrometheusText(await processMetrics.metrics());
}

async function calls(provider: string, labels: Record<string, string> = {}) {
  return sampleSum(await metrics(), 'cairn_model_call_duration_seconds_count', { provider, ...labels });
}

/** A chat model whose stream says what the test scripts; complete and verify go through its own methods, as real clients do. */
class ScriptedChat implements ChatModel {
  readonly id = 'scripted@test';
  constructor(private readonly deltas: ChatDelta[], private readonly failWith?: Error) {}

  async *stream(_messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    for (const d of this.deltas) {
      options.signal?.throwIfAborted();
      await new Promise((r) => setImmediate(r));
      yield d;
    }
    if (this.failWith) throw this.failWith;
  }

  async complete(messages: ChatMessage[], options?: ChatOptions): Promise<string> {
    let text = '';
    for await (const d of this.stream(messages, options)) if (d.kind === 'answer') text += d.text;
    return text;
  }

  async verify(): Promise<void> {
    await this.complete([{ role: 'user', content: 'ping' }]);
  }
}

const ANSWER: ChatDelta[] = [
  { kind: 'reasoning', text: 'thinking' },
  { kind: 'answer', text: 'Hello' },
  { kind: 'answer', text: ' there' },
  { kind: 'usage', text: '', usage: { prompt_tokens: 7, completion_tokens: 2 } },
];

describe('model call metrics', () => {
  it('keeps the client itself: same object, same class, instrumented once', async () => {
    const provider = freshProvider();
    const model = new ScriptedChat(ANSWER);
    assert.equal(instrumentModel(model, provider, 'chat'), model);
    assert.equal(instrumentModel(model, provider, 'chat'), model);
    assert.ok(model instanceof ScriptedChat);
    assert.equal(await model.complete([]), 'Hello there');
    assert.equal(await calls(provider), 1, 'instrumenting twice does not count twice');
  });

  it('times a stream read to its end as ok, with the time to the first delta and the reported tokens', async () => {
    const provider = freshProvider();
    const model = instrumentModel(new ScriptedChat(ANSWER), provider, 'chat');
    const seen: ChatDelta[] = [];
    for await (const d of model.stream([])) seen.push(d);
    assert.deepEqual(seen, ANSWER, 'deltas pass through unchanged');
    const m = await metrics();
    assert.equal(sampleValue(m, 'cairn_model_call_duration_seconds_count', { provider, kind: 'chat', operation: 'stream', outcome: 'ok' }), 1);
    assert.equal(sampleValue(m, 'cairn_model_chat_first_token_seconds_count', { provider }), 1);
    assert.equal(sampleValue(m, 'cairn_model_chat_tokens_total', { provider, type: 'prompt' }), 7);
    assert.equal(sampleValue(m, 'cairn_model_chat_tokens_total', { provider, type: 'completion' }), 2);
  });

  it('counts a call made through the model\'s own methods once, as the operation the caller asked for', async () => {
    const provider = freshProvider();
    const model = instrumentModel(new ScriptedChat(ANSWER), provider, 'chat');
    await model.complete([]);
    await model.verify!();
    assert.equal(await calls(provider, { operation: 'complete' }), 1, 'complete, not also its inner stream');
    assert.equal(await calls(provider, { operation: 'verify' }), 1);
    assert.equal(await calls(provider, { operation: 'stream' }), 0);
  });

  it('records a stream its reader stopped early, or aborted, as cancelled and not as an error', async () => {
    const provider = freshProvider();
    const model = instrumentModel(new ScriptedChat(ANSWER), provider, 'chat');
    for await (const d of model.stream([])) if (d.kind === 'answer') break;
    const controller = new AbortController();
    await assert.rejects(async () => {
      for await (const _d of model.stream([], { signal: controller.signal })) controller.abort();
    });
    assert.equal(await calls(provider, { operation: 'stream', outcome: 'cancelled' }), 2);
    assert.equal(sampleSum(await metrics(), 'cairn_model_call_errors_total', { provider }), 0);
  });

  it('counts failures by the status Cairn answers for them', async () => {
    const provider = freshProvider();
    const model = instrumentModel(new ScriptedChat(ANSWER.slice(0, 1), new ModelError('rate limited', provider, 429)), provider, 'chat');
    await assert.rejects(async () => {
      for await (const _d of model.stream([])) {
        // read on until the failure
      }
    }, /rate limited/);
    const embedder: EmbeddingModel = {
      id: 'broken@test',
      embed: async () => {
        throw new Error('socket hang up');
      },
    };
    instrumentModel(embedder, provider, 'embedding');
    await assert.rejects(embedder.embed(['x']), /socket hang up/);
    const m = await metrics();
    assert.equal(sampleValue(m, 'cairn_model_call_errors_total', { provider, kind: 'chat', operation: 'stream', status: '429' }), 1);
    assert.equal(sampleValue(m, 'cairn_model_call_errors_total', { provider, kind: 'embedding', operation: 'embed', status: 'other' }), 1);
    assert.equal(sampleValue(m, 'cairn_model_call_duration_seconds_count', { provider, kind: 'embedding', operation: 'embed', outcome: 'error' }), 1);
    assert.equal(sampleValue(m, 'cairn_model_embedded_texts_total', { provider }), undefined, 'failed texts are not counted as embedded');
  });

  it('counts every client createModel builds, labelled with its factory', async () => {
    const fake = await startFakeOpenAI();
    try {
      const provider = 'OpenAI-API-Compatible';
      const before = await calls(provider, { kind: 'embedding', operation: 'embed', outcome: 'ok' });
      const texts = sampleSum(await metrics(), 'cairn_model_embedded_texts_total', { provider });
      const model = createModel({ factory: 'openai-api-compatible', model_name: 'm', model_type: 'embedding', base_url: fake.baseUrl });
      assert.equal((await model.embed(['a', 'b', 'c'])).length, 3);
      assert.equal(await calls(provider, { kind: 'embedding', operation: 'embed', outcome: 'ok' }), before + 1);
      assert.equal(sampleSum(await metrics(), 'cairn_model_embedded_texts_total', { provider }), texts + 3);
    } finally {
      await fake.close();
    }
  });
});
