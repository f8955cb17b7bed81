/**
 * JSON-constrained generation for the built-in chat model, without node-llama-cpp: turning JSON Schemas
 * into the subset node-llama-cpp compiles to a grammar, the tool-call reply format, and reading the
 * streamed reply. Pure functions, unit-tested without the model.
 */
import { randomUUID } from 'node:crypto';
import type { ChatMessage, ToolCall, ToolSpec } from '../types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

const SCALARS = ['string', 'number', 'integer', 'boolean', 'null'] as const;
const STRING_FORMATS = new Set(['date-time', 'time', 'date']);
const MAX_DEPTH = 32;

/** Any JSON value (node-llama-cpp has no "any" schema: an object with any properties stands in for it). */
const ANY: Schema = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'object', additionalProperties: true },
    { type: 'array' },
  ],
};

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Rewrites a JSON Schema into what node-llama-cpp's `createGrammarForJsonSchema` understands, keeping
 * its meaning where the grammar can express it: `anyOf` becomes `oneOf`, `definitions` become `$defs`,
 * a list of types becomes a `oneOf`, `nullable` adds null, `{}` and `true` mean any value, an object
 * without `properties` takes any properties. What a grammar cannot enforce (minimum, pattern, ...) is
 * dropped. Every listed property is generated (node-llama-cpp makes them all required), which
 * satisfies any `required` list.
 */
export function toGrammarSchema(schema: unknown): Schema {
  return convert(schema, 0) ?? ANY;
}

function convert(schema: unknown, depth: number): Schema | undefined {
  if (depth > MAX_DEPTH) return ANY;
  if (schema === true || schema === undefined) return ANY;
  if (!isObject(schema)) return ANY;
  const out = convertInner(schema, depth);
  if (!out) return undefined;
  if (typeof schema.description === 'string' && !('$ref' in out)) out.description = schema.description;
  const defs = (isObject(schema.$defs) ? schema.$defs : undefined) ?? (isObject(schema.definitions) ? schema.definitions : undefined);
  if (defs) {
    out.$defs = Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, convert(v, depth + 1) ?? ANY]));
  }
  if (schema.nullable === true && !('$ref' in out)) return { oneOf: [out, { type: 'null' }] };
  return out;
}

function convertInner(s: Schema, depth: number): Schema | undefined {
  const next = (v: unknown) => convert(v, depth + 1) ?? ANY;
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace(/^#\/(definitions|\$defs)\//, '');
    return { $ref: `#/$defs/${name}` };
  }
  if ('const' in s) return { const: s.const as Json };
  if (Array.isArray(s.enum)) return { enum: s.enum as Json[] };
  const alternatives = (Array.isArray(s.oneOf) && s.oneOf) || (Array.isArray(s.anyOf) && s.anyOf);
  if (alternatives) return alternatives.length === 1 ? next(alternatives[0]) : { oneOf: alternatives.map(next) };
  if (Array.isArray(s.allOf) && s.allOf.length) return mergeAll(s.allOf.filter(isObject), depth);

  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : inferTypes(s);
  if (types.length === 0) return ANY;
  if (types.length > 1) {
    const scalars = types.filter((t): t is (typeof SCALARS)[number] => (SCALARS as readonly string[]).includes(t));
    const others = types.filter((t) => t === 'object' || t === 'array').map((t) => convertInner({ ...s, type: t }, depth)!);
    const parts: Schema[] = [...(scalars.length ? [scalars.length === 1 ? convertInner({ ...s, type: scalars[0] }, depth)! : { type: scalars }] : []), ...others];
    return parts.length === 1 ? parts[0] : { oneOf: parts };
  }
  const type = types[0]!;
  switch (type) {
    case 'object': {
      const properties = isObject(s.properties) ? s.properties : undefined;
      const out: Schema = { type: 'object' };
      if (properties) out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, next(v)]));
      if (s.additionalProperties === true || (isObject(s.additionalProperties) && Object.keys(s.additionalProperties).length === 0)) {
        out.additionalProperties = true;
      } else if (isObject(s.additionalProperties)) {
        out.additionalProperties = next(s.additionalProperties);
      } else if (!properties && s.additionalProperties !== false) {
        out.additionalProperties = true;
      }
      return out;
    }
    case 'array': {
      const out: Schema = { type: 'array' };
      if (s.items !== undefined && !Array.isArray(s.items)) out.items = next(s.items);
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
      if (prefix) out.prefixItems = prefix.map(next);
      if (typeof s.minItems === 'number') out.minItems = s.minItems;
      if (typeof s.maxItems === 'number') out.maxItems = s.maxItems;
      return out;
    }
    case 'string': {
      if (typeof s.format === 'string' && STRING_FORMATS.has(s.format)) return { type: 'string', format: s.format };
      const out: Schema = { type: 'string' };
      if (typeof s.minLength === 'number') out.minLength = s.minLength;
      if (typeof s.maxLength === 'number') out.maxLength = s.maxLength;
      return out;
    }
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type };
    default:
      return ANY;
  }
}

function inferTypes(s: Schema): string[] {
  if (isObject(s.properties) || s.additionalProperties !== undefined) return ['object'];
  if (s.items !== undefined || Array.isArray(s.prefixItems)) return ['array'];
  return [];
}

/** `allOf` of object schemas: their properties merged; anything else keeps the first schema. */
function mergeAll(parts: Schema[], depth: number): Schema | undefined {
  if (parts.length === 1 || !parts.every((p) => p.type === 'object' || isObject(p.properties))) return convert(parts[0], depth + 1);
  const properties: Record<string, unknown> = {};
  for (const p of parts) Object.assign(properties, isObject(p.properties) ? p.properties : {});
  return convert({ type: 'object', properties, additionalProperties: false }, depth + 1);
}

/** Longest string a tool argument may be, unless its schema says otherwise: keeps a small model from rambling. */
export const TOOL_ARGUMENT_MAX_LENGTH = 200;

/** Gives every string in a grammar schema without a maxLength the given one. */
function capStrings(schema: unknown, maxLength: number): unknown {
  if (Array.isArray(schema)) return schema.map((s) => capStrings(s, maxLength));
  if (!isObject(schema)) return schema;
  const out: Schema = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'const' || k === 'enum' ? v : capStrings(v, maxLength)]));
  if (out.type === 'string' && out.format === undefined && out.maxLength === undefined) out.maxLength = maxLength;
  return out;
}

/**
 * Schema of a reply when tools are offered: either one call to one of the tools (its string
 * arguments at most TOOL_ARGUMENT_MAX_LENGTH characters unless their schema says otherwise) or a
 * direct answer; with no tools, only an answer. One call per reply: allowed more, a small model
 * repeats the same call.
 */
export function toolReplySchema(tools: ToolSpec[]): Schema {
  const answer: Schema = { type: 'object', properties: { answer: { type: 'string' } } };
  if (tools.length === 0) return answer;
  const call = (t: ToolSpec): Schema => ({
    type: 'object',
    properties: {
      name: { const: t.name },
      arguments: capStrings(toGrammarSchema(t.parameters ?? { type: 'object', properties: {} }), TOOL_ARGUMENT_MAX_LENGTH) as Schema,
    },
  });
  return {
    oneOf: [
      {
        type: 'object',
        properties: {
          tool_calls: { type: 'array', minItems: 1, maxItems: 1, items: tools.length === 1 ? call(tools[0]!) : { oneOf: tools.map(call) } },
        },
      },
      answer,
    ],
  };
}

/**
 * The tools the model may still call in the current turn (the messages after the last user message):
 * those it has not called yet. A small model given a tool's result tends to call the same tool again
 * and again; once every tool has answered, the reply must be an answer.
 */
export function toolsLeft(tools: ToolSpec[], messages: ChatMessage[]): ToolSpec[] {
  const turn = messages.slice(messages.map((m) => m.role).lastIndexOf('user') + 1);
  const called = new Set(turn.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.name) : [])));
  return tools.filter((t) => !called.has(t.name));
}

/** Instructions appended to the system prompt when tools are offered: the tools and the reply format. */
export function toolInstructions(tools: ToolSpec[]): string {
  const lines = tools.map((t) => {
    const params = isObject(t.parameters) && isObject(t.parameters.properties) ? Object.keys(t.parameters.properties) : [];
    return `- ${t.name}(${params.join(', ')}): ${t.description || 'no description'}`;
  });
  return [
    '# Tools',
    ...lines,
    '',
    'Reply with JSON only, in one of two forms:',
    '- to call a tool: {"tool_calls": [{"name": "<tool name>", "arguments": {...}}]}',
    '- to answer: {"answer": "<your answer>"}',
    'Call a tool first when the question needs facts, documents or data and the conversation has no tool result yet; otherwise answer.',
  ].join('\n');
}

/** The model's own previous tool calls as the JSON it would have produced (for the conversation history). */
export function toolCallsText(calls: ToolCall[]): string {
  return JSON.stringify({ tool_calls: calls.map((c) => ({ name: c.name, arguments: parseArguments(c.arguments) })) });
}

function parseArguments(text: string): Json {
  try {
    return JSON.parse(text || '{}') as Json;
  } catch {
    return text;
  }
}

export function newToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** A complete reply to a tool offer: calls (ids generated, arguments as JSON text) or the answer. */
export type ToolReply = { kind: 'tool_calls'; calls: ToolCall[] } | { kind: 'answer'; text: string };

/**
 * Parses the (grammar-constrained) reply to a tool offer. A reply cut short by max_tokens is closed
 * first (see closeJson), so a call whose arguments were cut still counts, with what was generated;
 * a call whose name was cut (not one of `toolNames`) does not.
 */
export function parseToolReply(text: string, toolNames?: string[]): ToolReply | undefined {
  let value: unknown;
  for (const candidate of [text, ...closeJson(text)]) {
    try {
      value = JSON.parse(candidate);
      break;
    } catch {
      value = undefined;
    }
  }
  if (!isObject(value)) return undefined;
  if (Array.isArray(value.tool_calls)) {
    const calls = value.tool_calls
      .filter((c): c is Schema => isObject(c) && typeof c.name === 'string' && (!toolNames || toolNames.includes(c.name)))
      .map((c) => ({ id: newToolCallId(), name: c.name as string, arguments: JSON.stringify(c.arguments ?? {}) }));
    return calls.length ? { kind: 'tool_calls', calls } : undefined;
  }
  if (typeof value.answer === 'string') return { kind: 'answer', text: value.answer };
  return undefined;
}

/**
 * Ways to complete a JSON text that was cut short: the open string closed (an unfinished escape
 * dropped), then the open objects and arrays closed; and the same without a trailing dangling key,
 * comma or colon. Empty when nothing is open.
 */
export function closeJson(text: string): string[] {
  const closers: string[] = [];
  let inString = false;
  /** Index of the backslash of an escape still incomplete at the end (-1: none). */
  let openEscape = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (openEscape >= 0) {
        // `\uXXXX` needs 4 hex digits after the u; any other escape is one character.
        if (text[openEscape + 1] !== 'u' || i >= openEscape + 5) openEscape = -1;
      } else if (c === '\\') openEscape = i;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') closers.push('}');
    else if (c === '[') closers.push(']');
    else if (c === '}' || c === ']') closers.pop();
  }
  if (!inString && closers.length === 0) return [];
  const body = inString ? `${openEscape >= 0 ? text.slice(0, openEscape) : text}"` : text;
  const tail = closers.reverse().join('');
  const trimmed = body.replace(/[\s,:]+$/, '');
  const withoutKey = trimmed.replace(/,?\s*"(?:[^"\\]|\\.)*"\s*:?\s*$/, '').replace(/[\s,:]+$/, '');
  return [...new Set([trimmed + tail, withoutKey + tail])];
}

/**
 * Reads a reply to a tool offer as it streams and passes on the text of `{"answer": "..."}` as soon as
 * it is generated (JSON escapes decoded), so a direct answer streams like any other; a tool-call reply
 * yields nothing here and is parsed whole at the end.
 */
export class AnswerStreamer {
  private raw = '';
  private mode: 'head' | 'answer' | 'done' | 'other' = 'head';
  /** Index in `raw` of the next answer character not yet passed on. */
  private pos = 0;
  /** The decoded answer passed on so far. */
  emitted = '';

  /** Adds generated text; returns the newly decoded answer text (may be empty). */
  push(chunk: string): string {
    this.raw += chunk;
    if (this.mode === 'head') {
      const m = /^\s*\{\s*"(answer|tool_calls)"\s*:\s*("?)/.exec(this.raw);
      if (!m) {
        if (!/^\s*(\{\s*("[a-z_]*)?)?$/.test(this.raw)) this.mode = 'other';
        return '';
      }
      if (m[1] !== 'answer') {
        this.mode = 'other';
        return '';
      }
      if (!m[2]) return ''; // the opening quote has not arrived yet
      this.mode = 'answer';
      this.pos = m[0].length;
    }
    if (this.mode !== 'answer') return '';
    let out = '';
    while (this.pos < this.raw.length) {
      const c = this.raw[this.pos]!;
      if (c === '"') {
        this.mode = 'done';
        break;
      }
      if (c !== '\\') {
        out += c;
        this.pos++;
        continue;
      }
      const escape = this.decodeEscape(this.pos);
      if (!escape) break; // incomplete: wait for more text
      out += escape.text;
      this.pos = escape.end;
    }
    this.emitted += out;
    return out;
  }

  private decodeEscape(at: number): { text: string; end: number } | undefined {
    const next = this.raw[at + 1];
    if (next === undefined) return undefined;
    if (next !== 'u') {
      const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      return { text: simple[next] ?? next, end: at + 2 };
    }
    const hex = this.raw.slice(at + 2, at + 6);
    if (hex.length < 4) return undefined;
    const code = parseInt(hex, 16);
    if (code >= 0xd800 && code <= 0xdbff) {
      // A high surrogate is passed on together with its low half; a lone one is dropped.
      const rest = this.raw.slice(at + 6, at + 8);
      if (rest === '\\' || rest === '') return undefined;
      if (rest !== '\\u') return { text: '', end: at + 6 };
      const low = this.raw.slice(at + 8, at + 12);
      if (low.length < 4) return undefined;
      return { text: String.fromCharCode(code, parseInt(low, 16)), end: at + 12 };
    }
    return { text: String.fromCharCode(code), end: at + 6 };
  }
}
