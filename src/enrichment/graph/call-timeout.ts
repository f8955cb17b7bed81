import type { ChatModel } from '../../models/types.js';

/** A model call that did not answer in time: retried like any failing call. */
export class ModelCallTimeout extends Error {
  constructor(modelId: string, ms: number) {
    super(`${modelId} did not answer within ${Math.round(ms / 1000)} s`);
    this.name = 'ModelCallTimeout';
  }
}

/** The model with each complete() call bounded to `ms` (besides the caller's own signal). */
export function withCallTimeout(model: ChatModel, ms: number): ChatModel {
  return {
    id: model.id,
    stream: (messages, options) => model.stream(messages, options),
    async complete(messages, options = {}) {
      const timeout = AbortSignal.timeout(ms);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      try {
        return await model.complete(messages, { ...options, signal });
      } catch (err) {
        if (timeout.aborted && !options.signal?.aborted) throw new ModelCallTimeout(model.id, ms);
        throw err;
      }
    },
  };
}
