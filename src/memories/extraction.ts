/**
 * Parsing a chat model's extraction answer into memory items (pure: no I/O).
 *
 * The answer must be the JSON object the system prompt's OUTPUT FORMAT asks for, possibly wrapped in a
 * Markdown code fence or preceded by a <think> block. Anything that is not such an object is an
 * InvalidExtractionError: the extraction task fails with that message and nothing is stored.
 */
import { MAX_ITEMS_PER_TYPE, type ExtractedType } from './types.js';

export interface ExtractedItem {
  type: ExtractedType;
  /** Position within its type in the answer (0-based): with the source message, the item's identity. */
  ordinal: number;
  content: string;
  /** Epoch milliseconds. */
  valid_at: number;
  invalid_at: number | null;
}

export class InvalidExtractionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidExtractionError';
  }
}

/** A short, single-line excerpt of the answer for error messages. */
function excerpt(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Removes reasoning blocks and a surrounding Markdown code fence. */
export function stripFences(answer: string): string {
  let text = answer.replace(/<think>[\s\S]*?<\/think>/gi, '').trim();
  const fenced = /^```[\w-]*\s*\n?([\s\S]*?)\n?```$/.exec(text);
  if (fenced) text = fenced[1]!.trim();
  else {
    // A fence somewhere inside a longer answer ("Here you go: ```json {...} ```").
    const inner = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
    if (inner && !text.startsWith('{')) text = inner[1]!.trim();
  }
  return text;
}

/**
 * An ISO-8601 (or other Date-parsable) time to epoch milliseconds; `fallback` when absent or unreadable.
 * A date without a time zone is read as UTC. Numbers are taken as Unix seconds (or milliseconds when
 * they are too large to be seconds).
 */
export function normaliseTime(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  if (typeof value !== 'string' || !value.trim()) return fallback;
  let text = value.trim();
  // "2025-03-02 14:30:00" and "2025-03-02T14:30:00" without a zone: UTC, as the prompt asks for UTC times.
  if (/^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(text)) text = text.includes(' ') || text.includes('T') ? `${text.replace(' ', 'T')}Z` : `${text}T00:00:00Z`;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : fallback;
}

export function optionalTime(value: unknown): number | null {
  const ms = normaliseTime(value, NaN);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The items of an extraction answer, for the types the memory keeps, at most MAX_ITEMS_PER_TYPE of each
 * (the first ones). An item may be an object with `content` or a bare string; items without content are
 * skipped. valid_at falls back to the conversation time; invalid_at to null.
 */
/**
 * The one JSON object in a model's answer (fences, <think> blocks and chatter around the braces tolerated);
 * anything else is an InvalidExtractionError naming what the model said.
 */
export function parseJsonObject(answer: string, expected = 'a JSON object with semantic / episodic / procedural lists'): Record<string, unknown> {
  const text = stripFences(answer);
  if (!text) throw new InvalidExtractionError('the model returned an empty answer instead of the JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // A JSON object with chatter around it: take the outermost braces.
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    try {
      if (start < 0 || end <= start) throw new Error('no object');
      parsed = JSON.parse(text.slice(start, end + 1));
    } catch {
      throw new InvalidExtractionError(`the model's answer is not valid JSON: "${excerpt(answer)}"`);
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidExtractionError(`the model's answer is not ${expected}: "${excerpt(answer)}"`);
  }
  return parsed as Record<string, unknown>;
}

export function parseExtraction(answer: string, types: readonly ExtractedType[], conversationTime: number): ExtractedItem[] {
  const record = parseJsonObject(answer);
  const items: ExtractedItem[] = [];
  for (const type of types) {
    const raw = record[type];
    if (raw === undefined || raw === null) continue;
    if (!Array.isArray(raw)) throw new InvalidExtractionError(`"${type}" in the model's answer must be a list, got ${typeof raw}`);
    let ordinal = 0;
    for (const entry of raw) {
      if (ordinal >= MAX_ITEMS_PER_TYPE) break;
      const obj = typeof entry === 'string' ? { content: entry } : entry && typeof entry === 'object' ? (entry as Record<string, unknown>) : undefined;
      const content = typeof obj?.content === 'string' ? obj.content.trim() : '';
      if (!content) continue;
      items.push({
        type,
        ordinal,
        content,
        valid_at: normaliseTime(obj!.valid_at, conversationTime),
        invalid_at: optionalTime(obj!.invalid_at),
      });
      ordinal++;
    }
  }
  return items;
}
