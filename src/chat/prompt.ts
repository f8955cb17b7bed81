/**
 * Prompt variables of chat assistants (spec "Prompt variables for chat assistants"):
 * `{knowledge}` stands for the retrieved chunks; every other `{name}` in the system prompt is a custom
 * variable whose value comes with each conversation call; the parameter list and the system prompt
 * must name the same variables.
 */
import { badRequest } from '../errors.js';
import type { PromptConfig, PromptParameter } from './config.js';

export const KNOWLEDGE = 'knowledge';

/** A variable reference in a system prompt. Other braces (JSON examples, `{ x }`) are plain text. */
const VARIABLE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export const VARIABLE_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';

/**
 * Request keys the conversation routes read themselves; a custom variable of the same name could never
 * be passed as an extra top-level key, so such names are refused.
 */
export const RESERVED_VARIABLE_NAMES: readonly string[] = [
  'chat_id', 'session_id', 'conversation_id', 'user_id', 'question', 'messages', 'stream', 'legacy',
  'model', 'extra_body', 'reference', 'reference_metadata',
];

/** The distinct variables of a system prompt, in order of first appearance. */
export function promptVariables(system: string): string[] {
  return [...new Set([...system.matchAll(VARIABLE)].map((m) => m[1]!))];
}

/** Throws a 400 naming the first disagreement between the parameter list and the system prompt. */
export function checkPromptConfig(config: Pick<PromptConfig, 'system' | 'parameters'>): void {
  const keys = new Set<string>();
  for (const { key } of config.parameters) {
    if (!new RegExp(VARIABLE_NAME).test(key)) throw badRequest(`prompt_config.parameters: \`${key}\` is not a valid variable name (letters, digits and _, not starting with a digit)`);
    if (keys.has(key)) throw badRequest(`prompt_config.parameters contains duplicate key: ${key}`);
    if (RESERVED_VARIABLE_NAMES.includes(key)) throw badRequest(`prompt_config.parameters: \`${key}\` is reserved by the conversation API and cannot be a variable name`);
    keys.add(key);
  }
  const used = promptVariables(config.system);
  for (const key of keys) {
    if (!used.includes(key)) {
      throw badRequest(`Parameter '${key}' is in prompt_config.parameters but {${key}} is not in prompt_config.system: add it to the system prompt or remove it from the parameters`);
    }
  }
  for (const name of used) {
    if (!keys.has(name)) {
      throw badRequest(`Variable {${name}} is in prompt_config.system but not in prompt_config.parameters: add {"key": "${name}", "optional": false} to the parameters or remove it from the system prompt`);
    }
  }
}

/**
 * Values of the custom variables taken from the request's extra keys. A missing mandatory variable is
 * a 400 naming it; a missing optional one is empty.
 */
export function variableValues(parameters: PromptParameter[], given: Record<string, unknown>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const { key, optional } of parameters) {
    if (key === KNOWLEDGE) continue;
    const value = given[key];
    if (value === undefined || value === null) {
      if (!optional) throw badRequest(`Missing value for the mandatory prompt variable '${key}': pass it as the top-level key "${key}" of the request body`);
      values[key] = '';
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      values[key] = String(value);
    } else {
      throw badRequest(`The prompt variable '${key}' must be a string`);
    }
  }
  return values;
}

/** The system prompt with `{knowledge}` and the custom variables filled in (one pass: values are never re-expanded). */
export function renderSystemPrompt(system: string, values: Record<string, string>, knowledge: string): string {
  return system.replace(VARIABLE, (whole, name: string) => {
    if (name === KNOWLEDGE) return knowledge;
    return Object.hasOwn(values, name) ? values[name]! : whole;
  });
}

export interface KnowledgeChunk {
  document_name: string;
  content: string;
}

/** The retrieved chunks as the model sees them; `ID: n` is what citation markers `[ID:n]` refer to. */
export function formatKnowledge(chunks: KnowledgeChunk[]): string {
  return chunks.map((c, i) => `ID: ${i}\n├── Title: ${c.document_name}\n└── Content:\n${c.content}`).join('\n\n');
}
