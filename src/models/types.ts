/** Chat message as sent to a chat model. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** On an assistant message: the tool calls the model asked for (content is then usually empty). */
  tool_calls?: ToolCall[];
  /** On a tool message: the id of the call this message answers. */
  tool_call_id?: string;
  /** On a user message: images (data URLs) the model is shown beside the text; a vision model reads them. */
  images?: string[];
}

/** A function the model may call (OpenAI `tools[].function`). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A call the model asked for; `arguments` is the JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatOptions {
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  max_tokens?: number;
  stop?: string[];
  /** Fixed sampling seed, where the provider supports one. */
  seed?: number;
  /** Functions the model may call; calls arrive as a `tool_calls` delta at the end of the stream. */
  tools?: ToolSpec[];
  /** Constrain the answer to JSON matching this schema (OpenAI `response_format: json_schema`; grammar for the built-in model). */
  json_schema?: Record<string, unknown>;
  /** Extra template arguments for the model's chat template (RAGFlow's chat_template_kwargs), passed through where supported. */
  chat_template_kwargs?: Record<string, unknown>;
  signal?: AbortSignal;
}

/**
 * A streamed piece of a chat answer: reasoning ("thinking") text is kept apart from the answer.
 * When the model calls tools, the stream ends with one `tool_calls` delta carrying every call
 * (text empty). A `usage` delta (text empty) may close the stream with the provider's token counts.
 */
export type ChatDelta =
  | { kind: 'reasoning' | 'answer'; text: string }
  | { kind: 'tool_calls'; text: ''; calls: ToolCall[] }
  | { kind: 'usage'; text: ''; usage: TokenUsage };

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ChatModel {
  readonly id: string;
  stream(messages: ChatMessage[], options?: ChatOptions): AsyncIterable<ChatDelta>;
  /** Whole answer (reasoning dropped). */
  complete(messages: ChatMessage[], options?: ChatOptions): Promise<string>;
  /** Checks that the provider is reachable and serves this model (a tiny real call); throws ModelError. */
  verify?(): Promise<void>;
}

/**
 * What a text is embedded for: a `passage` is stored and searched (chunks, memory items), a `query` searches
 * them. Models trained with an instruction for queries (BGE) embed the two differently; others ignore it.
 */
export type EmbedPurpose = 'passage' | 'query';

export interface EmbeddingModel {
  readonly id: string;
  /** Embeds a batch of texts (as passages unless told otherwise); vectors are L2-normalised. */
  embed(texts: string[], purpose?: EmbedPurpose): Promise<number[][]>;
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
