import { AsyncLocalStorage } from 'node:async_hooks';
import { Counter, Histogram } from 'prom-client';
import { processMetrics } from '../observability/metrics.js';
import { ModelError, type ChatDelta, type ChatMessage, type ChatModel, type ChatOptions, type EmbeddingModel, type EmbedPurpose, type RerankModel } from './types.js';

type Model = ChatModel | EmbeddingModel | RerankModel;
type Outcome = 'ok' | 'error' | 'cancelled';

const registers = [processMetrics];

const durations = new Histogram({
  name: 'cairn_model_call_duration_seconds',
  help: 'Model calls by provider factory, model kind, operation and outcome (ok, error, cancelled); a stream lasts until its last delta.',
  labelNames: ['provider', 'kind', 'operation', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  registers,
});

const errors = new Counter({
  name: 'cairn_model_call_errors_total',
  help: 'Failed model calls by provider factory, model kind, operation and status (the HTTP status Cairn answers for the failure).',
  labelNames: ['provider', 'kind', 'operation', 'status'] as const,
  registers,
});

const firstDelta = new Histogram({
  name: 'cairn_model_chat_first_token_seconds',
  help: 'Time from a chat stream starting to its first reasoning, answer or tool-call delta, by provider factory.',
  labelNames: ['provider'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

const tokens = new Counter({
  name: 'cairn_model_chat_tokens_total',
  help: 'Tokens of chat streams as the provider reported them (prompt, completion), by provider factory.',
  labelNames: ['provider', 'type'] as const,
  registers,
});

const embeddedTexts = new Counter({
  name: 'cairn_model_embedded_texts_total',
  help: 'Texts embedded successfully, by provider factory.',
  labelNames: ['provider'] as const,
  registers,
});

/** Set while an instrumented call runs: calls it makes on its own model (verify -> complete -> stream) are part of it. */
const measuring = new AsyncLocalStorage<true>();
const instrumented = new WeakSet<Model>();

interface Labels {
  provider: string;
  kind: string;
  operation: string;
}

const elapsed = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

function outcomeOf(err: unknown, signal: AbortSignal | undefined): Outcome {
  return signal?.aborted || (err as Error | undefined)?.name === 'AbortError' ? 'cancelled' : 'error';
}

function recordFailure(labels: Labels, err: unknown, signal: AbortSignal | undefined, start: bigint): void {
  const outcome = outcomeOf(err, signal);
  durations.observe({ ...labels, outcome }, elapsed(start));
  if (outcome === 'error') errors.inc({ ...labels, status: err instanceof ModelError ? String(err.status) : 'other' });
}

async function timed<T>(labels: Labels, signal: AbortSignal | undefined, call: () => Promise<T>, onOk?: (value: T) => void): Promise<T> {
  if (measuring.getStore()) return call();
  const start = process.hrtime.bigint();
  try {
    const value = await measuring.run(true, call);
    durations.observe({ ...labels, outcome: 'ok' }, elapsed(start));
    onOk?.(value);
    return value;
  } catch (err) {
    recordFailure(labels, err, signal, start);
    throw err;
  }
}

async function* timedStream(labels: Labels, signal: AbortSignal | undefined, source: AsyncIterable<ChatDelta>): AsyncIterable<ChatDelta> {
  const start = process.hrtime.bigint();
  let first = true;
  let failed = false;
  let finished = false;
  try {
    for await (const delta of source) {
      if (delta.kind === 'usage') {
        tokens.inc({ provider: labels.provider, type: 'prompt' }, Math.max(0, delta.usage.prompt_tokens || 0));
        tokens.inc({ provider: labels.provider, type: 'completion' }, Math.max(0, delta.usage.completion_tokens || 0));
      } else if (first) {
        first = false;
        firstDelta.observe({ provider: labels.provider }, elapsed(start));
      }
      yield delta;
    }
    finished = true;
  } catch (err) {
    failed = true;
    recordFailure(labels, err, signal, start);
    throw err;
  } finally {
    // A reader that stops early (its own choice or its caller's abort) cancelled the stream.
    if (!failed) durations.observe({ ...labels, outcome: finished ? 'ok' : 'cancelled' }, elapsed(start));
  }
}

/**
 * Makes every call of the client count in cairn_model_* metrics, in place (the client keeps its class
 * and identity: built-in models are shared instances). Idempotent. `provider` is the factory name,
 * a bounded set; model names are not labels, since tenants choose them freely.
 */
export function instrumentModel<M extends Model>(model: M, provider: string, kind: string): M {
  if (instrumented.has(model)) return model;
  instrumented.add(model);
  const labels = (operation: string): Labels => ({ provider, kind, operation });
  const m = model as unknown as Record<string, (...args: any[]) => any>;

  const stream = m.stream?.bind(model) as ChatModel['stream'] | undefined;
  if (stream) {
    m.stream = (messages: ChatMessage[], options?: ChatOptions) =>
      measuring.getStore() ? stream(messages, options) : timedStream(labels('stream'), options?.signal, stream(messages, options));
  }
  const complete = m.complete?.bind(model) as ChatModel['complete'] | undefined;
  if (complete) m.complete = (messages: ChatMessage[], options?: ChatOptions) => timed(labels('complete'), options?.signal, () => complete(messages, options));
  const embed = m.embed?.bind(model) as EmbeddingModel['embed'] | undefined;
  if (embed) {
    m.embed = (texts: string[], purpose?: EmbedPurpose) =>
      timed(labels('embed'), undefined, () => embed(texts, purpose), () => embeddedTexts.inc({ provider }, texts.length));
  }
  const rerank = m.rerank?.bind(model) as RerankModel['rerank'] | undefined;
  if (rerank) m.rerank = (query: string, documents: string[]) => timed(labels('rerank'), undefined, () => rerank(query, documents));
  const verify = m.verify?.bind(model) as (() => Promise<void>) | undefined;
  if (verify) m.verify = () => timed(labels('verify'), undefined, verify);
  return model;
}
