/**
 * The memory scope of the embedded index's full text: every message's FTS5 row carries, in a column of
 * its own (`memory`, weight 0), one token naming its memory, and a search ANDs its words with the tokens
 * of the memories it names. FTS5 then steps the words' posting lists only to the rows of those memories
 * (its doclists skip ahead by rowid), so a search within one memory costs what that memory holds, not what
 * the whole index holds; the filter on memory_rows afterwards only sees rows of the searched memories.
 */

/**
 * The token of a memory: the id's UTF-8 bytes in hex, so that any id is one unicode61 token, and a
 * trailing digit, so that the porter stemmer (which strips only letter suffixes) never changes it and two
 * ids never share a token.
 */
export function memoryScopeToken(memoryId: string): string {
  return `m${Buffer.from(memoryId, 'utf8').toString('hex')}0`;
}

/** The FTS5 MATCH expression of `words` (already quoted phrases) within the memories `memoryIds`. */
export function scopedMatch(phrases: string[], memoryIds: string[]): string {
  const scope = [...new Set(memoryIds)].map(memoryScopeToken).join(' OR ');
  return `content : (${phrases.join(' OR ')}) AND memory : (${scope})`;
}
