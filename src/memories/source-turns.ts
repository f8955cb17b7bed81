/**
 * Items → the turns behind them. An extracted item (semantic, episodic, procedural) keeps its raw
 * message's id in `source_id`; search_message with `include_source=true` returns, on each item found,
 * that turn (`source`: its id, content and date), so a caller gets both the distilled fact and the words
 * it came from, with the conversation time. The turn may have been removed since (FIFO, forget, delete):
 * then `source` is null. A forgotten or disabled turn is still shown here: the item found is what the
 * search returned, the turn is only its provenance.
 */
import type { MemoryIndex, MemoryMessage } from '../index/memories/memory-index.js';

export interface SourceTurn {
  message_id: number;
  content: string;
  valid_at: number;
  valid_date: string;
  session_id: string;
}

/** ISO 8601 (UTC) form of an epoch-ms time, as search results show dates. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString();
}

/** The source turn of each item among `messages` (by the item's message id); raw messages get none. */
export async function sourceTurns(index: MemoryIndex, messages: MemoryMessage[]): Promise<Map<number, SourceTurn | null>> {
  const items = messages.filter((m) => m.message_type !== 'raw' && m.source_id > 0);
  const raws = await index.getMany([...new Set(items.map((m) => m.source_id))]);
  const byId = new Map(raws.map((r) => [r.message_id, r]));
  const out = new Map<number, SourceTurn | null>();
  for (const item of items) {
    const raw = byId.get(item.source_id);
    // Ids are global, so a raw message is the item's source only within the item's own memory.
    out.set(item.message_id, raw && raw.memory_id === item.memory_id && raw.message_type === 'raw'
      ? { message_id: raw.message_id, content: raw.content, valid_at: Math.floor(raw.valid_at / 1000), valid_date: isoDate(raw.valid_at), session_id: raw.session_id }
      : null);
  }
  return out;
}
