/** A chat assistant's model settings, prompt configuration and retrieval defaults (spec "Chat"). */

export interface LlmSetting {
  temperature: number;
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  /** Largest answer, in tokens. */
  max_token: number;
}

export interface PromptParameter {
  key: string;
  /** false: the variable must be given with every conversation call. */
  optional: boolean;
}

export interface PromptConfig {
  system: string;
  /** Answer given without calling the model when retrieval finds nothing; blank: the model answers on its own. */
  empty_response: string;
  /** Opening message of a new session. */
  prologue: string;
  /** Insert citation markers ([ID:n]) into answers. */
  quote: boolean;
  parameters: PromptParameter[];
  /** RAGFlow's "use knowledge graph": retrieval adds the datasets' knowledge-graph chunk on top. */
  use_kg?: boolean;
  /**
   * Check each answer sentence's figures and names against the retrieved chunks, and quote the passage instead
   * of a sentence stating one they do not hold (src/chat/grounding.ts). Unset (null): on for the built-in chat
   * model, off for others.
   */
  grounding_check?: boolean | null;
}

export const DEFAULT_LLM_SETTING: LlmSetting = {
  temperature: 0.1,
  top_p: 0.3,
  presence_penalty: 0.4,
  frequency_penalty: 0.7,
  max_token: 512,
};

export const DEFAULT_SYSTEM_PROMPT =
  'You are an intelligent assistant. Answer the question in detail using the knowledge base below. ' +
  'When none of the knowledge base is relevant to the question, say that the answer was not found in the knowledge base. ' +
  'Take the chat history into account.\n\nHere is the knowledge base:\n{knowledge}\nThe above is the knowledge base.';

export const DEFAULT_PROLOGUE = "Hi! I'm your assistant. What can I do for you?";

export function defaultPromptConfig(): PromptConfig {
  return {
    system: DEFAULT_SYSTEM_PROMPT,
    empty_response: '',
    prologue: DEFAULT_PROLOGUE,
    quote: true,
    parameters: [{ key: 'knowledge', optional: true }],
  };
}

export const RETRIEVAL_DEFAULTS = {
  similarity_threshold: 0.2,
  vector_similarity_weight: 0.3,
  top_n: 6,
  top_k: 1024,
} as const;

export const DEFAULT_SESSION_NAME = 'New session';
