/**
 * What a memory search may narrow itself to beyond the index's filters (Cairn extensions of
 * search_message, docs/memories.md "Search: dates, types and source turns"):
 *
 * - `valid_since` / `valid_until`: only messages whose valid_at (for a raw message its session time, for
 *   an extracted item the time the model gave it, else its turn's time) lies within the bounds, inclusive;
 *   a question about a period ("what did I plan in March?") searches that period only.
 * - `message_type`: only messages of these types (raw turns only, extracted items only, …).
 *
 * These are checked on the ranked candidates (src/memories/search.ts) rather than in the index, so every
 * MemoryIndex implementation honours them unchanged.
 */
import type { MemoryMessage, MemoryType } from '../index/memories/memory-index.js';
import { isMemoryType, MEMORY_TYPES } from './types.js';
import { badRequest } from '../errors.js';

export interface SearchScope {
  /** Epoch ms, inclusive. */
  validSince?: number;
  /** Epoch ms, inclusive. */
  validUntil?: number;
  messageTypes?: MemoryType[];
}

/** The latest time an API client may give: far beyond any conversation, well within Date's range. */
const MAX_SECONDS = 253_402_300_799; // 9999-12-31T23:59:59Z

/**
 * A time given to the API as Unix seconds (a number or a numeric string) or an ISO 8601 date/time
 * (a time without a zone is UTC); epoch ms. A date alone is the start of that UTC day, or its end for an
 * upper bound (`dateMeans: 'end'`). A 400 naming the field otherwise.
 */
export function parseApiTime(value: unknown, field: string, dateMeans: 'start' | 'end' = 'start'): number {
  if (typeof value === 'number' || (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value))) {
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_SECONDS) return Math.round(seconds * 1000);
  } else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
    const text = value.trim();
    const zoned = /([zZ]|[+-]\d{2}:?\d{2})$/.test(text) || text.length === 10 ? text : `${text}Z`;
    const ms = Date.parse(zoned);
    // A date alone is a whole day: from its first millisecond, or through its last one for an upper bound.
    if (Number.isFinite(ms) && ms >= 0) return text.length === 10 && dateMeans === 'end' ? ms + 86_400_000 - 1 : ms;
  }
  throw badRequest(`\`${field}\` must be Unix seconds or an ISO 8601 date or time (e.g. 2025-03-02 or 2025-03-02T14:30:00Z), got ${JSON.stringify(value)}.`);
}

/** The scope from the search route's extension parameters; a 400 for a bad time, type or empty range. */
export function searchScope(input: { valid_since?: unknown; valid_until?: unknown; message_type?: string[] }): SearchScope {
  const scope: SearchScope = {};
  if (input.valid_since !== undefined && input.valid_since !== '') scope.validSince = parseApiTime(input.valid_since, 'valid_since');
  if (input.valid_until !== undefined && input.valid_until !== '') scope.validUntil = parseApiTime(input.valid_until, 'valid_until', 'end');
  if (scope.validSince !== undefined && scope.validUntil !== undefined && scope.validSince > scope.validUntil) {
    throw badRequest('`valid_since` must not be after `valid_until`.');
  }
  if (input.message_type?.length) {
    const unknown = input.message_type.filter((t) => !isMemoryType(t));
    if (unknown.length) throw badRequest(`Message type '${unknown.join("', '")}' is not supported: choose from ${MEMORY_TYPES.join(', ')}.`);
    scope.messageTypes = input.message_type as MemoryType[];
  }
  return scope;
}

/** Whether the scope narrows anything (an empty scope accepts every message). */
export function isScoped(scope: SearchScope | undefined): scope is SearchScope {
  return !!scope && (scope.validSince !== undefined || scope.validUntil !== undefined || !!scope.messageTypes?.length);
}

export function inScope(message: MemoryMessage, scope: SearchScope): boolean {
  if (scope.validSince !== undefined && message.valid_at < scope.validSince) return false;
  if (scope.validUntil !== undefined && message.valid_at > scope.validUntil) return false;
  if (scope.messageTypes?.length && !scope.messageTypes.includes(message.message_type)) return false;
  return true;
}
