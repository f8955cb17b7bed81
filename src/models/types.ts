/** Chat message as sent to a chat model. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatOptions {
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  max_tokens?: number;
  signal?: AbortSignal;
}

/** A streamed piece of a chat answer: reasoning ("thinking") text is kept apart from the answer. */
export interface ChatDelta {
  kind: 'reasoning' | 'answer';
  text: string;
}

export interface ChatModel {
  readonly id: string;
  stream(messages: ChatMessage[], options?: ChatOptions): AsyncIterable<ChatDelta>;
  /** Whole answer (reasoning dropped). */
  complete(messages: ChatMessage[], options?: ChatOptions): Promise<string>;
  /** Checks that the provider is reachable and serves this model (a tiny real call); throws ModelError. */
  verify?(): Promise<void>;
}

export interface EmbeddingModel {
  readonly id: string;
  /** Embeds a batch of texts; vectors are L2-normalised. */
  embed(texts: string[]): Promise<number[][]>;
  /** See ChatModel.verify. */
  verify?(): Promise<void>;
}

export interface RerankModel {
  readonly id: string;
  /** One score in 0..1 per document, in the documents' order. */
  rerank(query: string, documents: string[]): Promise<number[]>;
  /** See ChatModel.verify. */
  verify?(): Promise<void>;
}

/** Raised for any model-provider failure; message names the provider and the cause. */
export class ModelError extends Error {
  constructor(message: string, readonly provider: string, readonly status = 400) {
    super(message);
    this.name = 'ModelError';
  }
}
