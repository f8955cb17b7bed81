/**
 * Extraction as structured output (pure: no I/O): the JSON Schema a memory's chat model is held to, and
 * the clean-up of what it answered.
 *
 * The built-in chat model (SmolLM2-135M) asked for JSON in words answers prose or broken JSON; held to a
 * JSON Schema (a grammar, for the built-in model), it can only answer the object the extraction reads. The
 * schema also bounds the answer: a few items per type, each one sentence, so the object always closes within
 * the answer's token budget.
 */
import { MAX_ITEMS_PER_TYPE, type ExtractedType } from './types.js';
import type { ExtractedItem } from './extraction.js';
import { normaliseWords } from '../text/split.js';

/** Items per type a small model is asked for: more only repeats the first ones. */
export const SMALL_MODEL_ITEMS_PER_TYPE = 2;
/** Characters of one item: one sentence. */
export const ITEM_MAX_CHARS = 160;

/**
 * The extraction answer's schema for these types: for each, a list of items with their content; times are
 * left out (the conversation time stands in for valid_at), as a small model writes them wrong.
 */
export function extractionSchema(types: readonly ExtractedType[], itemsPerType = SMALL_MODEL_ITEMS_PER_TYPE): Record<string, unknown> {
  const item = { type: 'object', properties: { content: { type: 'string', maxLength: ITEM_MAX_CHARS } }, required: ['content'], additionalProperties: false };
  const list = { type: 'array', items: item, maxItems: Math.min(itemsPerType, MAX_ITEMS_PER_TYPE) };
  return { type: 'object', properties: Object.fromEntries(types.map((t) => [t, list])), required: [...types], additionalProperties: false };
}

/**
 * Tokens the answer may need: every item full (a token spans ~3 characters at worst, in JSON), plus the keys.
 * The grammar cannot end the object before its lists close, so the budget must hold the longest one.
 */
export function extractionTokenBudget(types: readonly ExtractedType[], itemsPerType = SMALL_MODEL_ITEMS_PER_TYPE): number {
  return 32 + types.length * (16 + Math.min(itemsPerType, MAX_ITEMS_PER_TYPE) * Math.ceil(ITEM_MAX_CHARS / 3 + 12));
}

export interface CleanedExtraction {
  items: ExtractedItem[];
  /** Why items were dropped, for the task's message ('' when none was). */
  note: string;
}

/** A memory says something in words: at least two of them ("2026-12-05T00:47:47Z" or "..." says nothing). */
const hasWords = (text: string) => (text.match(/\p{L}{2,}/gu) ?? []).length >= 2;

/**
 * Drops what is not a memory: items without words ("...", a bare date), the same item twice (any type),
 * and items that repeat the prompt (its example sentences, or a line of its instructions) instead of the
 * conversation. Positions (`ordinal`) are renumbered per type.
 */
export function cleanExtraction(items: ExtractedItem[], prompt: string): CleanedExtraction {
  const promptText = normaliseWords(prompt);
  const seen = new Set<string>();
  const dropped = { empty: 0, repeated: 0, prompt: 0 };
  const kept: ExtractedItem[] = [];
  for (const item of items) {
    const key = normaliseWords(item.content);
    if (!hasWords(item.content)) dropped.empty++;
    else if (seen.has(key)) dropped.repeated++;
    else if (key.length >= 12 && promptText.includes(key)) dropped.prompt++;
    else {
      seen.add(key);
      kept.push(item);
    }
  }
  const ordinals = new Map<ExtractedType, number>();
  const items2 = kept.map((i) => {
    const ordinal = ordinals.get(i.type) ?? 0;
    ordinals.set(i.type, ordinal + 1);
    return { ...i, ordinal };
  });
  const reasons = [
    dropped.empty && `${dropped.empty} without words`,
    dropped.repeated && `${dropped.repeated} repeated`,
    dropped.prompt && `${dropped.prompt} copied from the instructions instead of the conversation`,
  ].filter(Boolean);
  return { items: items2, note: reasons.length ? `dropped ${reasons.join(', ')}` : '' };
}
