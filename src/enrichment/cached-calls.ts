import { createHash } from 'node:crypto';
import type { EnrichmentRepo } from '../store/enrichment.js';
import type { ChatMessage, ChatModel, ChatOptions } from '../models/types.js';
import { countTokens } from '../text/tokens.js';
import { isBuiltinModelId } from '../models/builtin/spec.js';

/** One model call of an enrichment job. `kind` keeps different jobs' prompts apart in the cache. */
export interface EnrichmentCall {
  kind: string;
  messages: ChatMessage[];
  options?: Omit<ChatOptions, 'signal' | 'tools'>;
  /**
   * The answer's JSON Schema, for the built-in chat model: held to it (a grammar), its answer always parses.
   * Other models answer the prompt's format, read leniently. Not part of the cache key: both answers parse.
   */
  builtinSchema?: Record<string, unknown>;
}

export interface CallResult {
  text: string;
  /** Answered from the cache: no model call was made. */
  cached: boolean;
  /** Prompt + answer tokens of a call made now (0 when cached). */
  tokens: number;
}

/**
 * The cache key of a call: the tenant, the model and everything it was asked, hashed. Model ids name a
 * tenant's provider instance (`name@instance@factory`), and two tenants' instances of one name may point
 * at different servers: answers are never shared between tenants.
 */
export function callKey(tenantId: string, modelId: string, call: EnrichmentCall): string {
  return createHash('sha256').update(JSON.stringify([tenantId, call.kind, modelId, call.messages, call.options ?? {}])).digest('hex');
}

/**
 * Runs the calls, `concurrency` at a time, answering from the enrichment cache where the same model was
 * asked the same before; each new answer is stored as soon as it arrives, so a job killed halfway
 * keeps every answer it paid for. A failing call rejects (after the others in flight settle).
 */
export async function cachedCalls(
  cache: EnrichmentRepo,
  model: ChatModel,
  calls: EnrichmentCall[],
  options: { tenantId: string; concurrency: number; signal?: AbortSignal; onResult?: (result: CallResult, index: number) => void },
): Promise<CallResult[]> {
  const keys = calls.map((c) => callKey(options.tenantId, model.id, c));
  const known = await cache.cached([...new Set(keys)]);
  const results: CallResult[] = new Array(calls.length);
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (failure === undefined && next < calls.length) {
      const i = next++;
      const hit = known.get(keys[i]!);
      let result: CallResult;
      if (hit !== undefined) {
        result = { text: hit, cached: true, tokens: 0 };
      } else {
        const call = calls[i]!;
        try {
          const structured = call.builtinSchema && isBuiltinModelId(model.id) ? { json_schema: call.builtinSchema } : {};
          const text = await model.complete(call.messages, { ...call.options, ...structured, signal: options.signal });
          await cache.remember([{ key: keys[i]!, value: text }]);
          known.set(keys[i]!, text);
          result = { text, cached: false, tokens: call.messages.reduce((n, m) => n + countTokens(m.content), 0) + countTokens(text) };
        } catch (err) {
          failure ??= err;
          return;
        }
      }
      results[i] = result;
      options.onResult?.(result, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, calls.length)) }, worker));
  if (failure !== undefined) throw failure;
  return results;
}
