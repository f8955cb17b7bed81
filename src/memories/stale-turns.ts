/**
 * Stale turns: what extraction knows about a raw turn, used when ranking it (docs/memories.md "Search:
 * turns whose facts were replaced").
 *
 * A raw turn is what was said and is never invalidated itself. But when every fact (semantic item)
 * extracted from it is no longer current — each one updated, contradicted, corrected or retracted — the
 * turn states only things that have stopped being true. A default search (current facts only) then ranks
 * it at half its similarity, so that the turn holding the change, which often shares fewer words with a
 * question like "what is my job now?", comes first. The stale turn is not hidden: it is still what was
 * said, and it still answers "what did I do before?" when nothing else matches.
 *
 * Only semantic items count: episodic and procedural items record events and how-tos, which later turns
 * do not replace. A turn without semantic items (nothing extracted yet, a raw-only memory) is never stale.
 * With include_invalid=true nothing is demoted.
 */
import type { MemoryIndex, MemoryMessage } from '../index/memories/memory-index.js';

/** The factor a stale turn's similarity is multiplied by in a default (current-only) search. */
export const STALE_TURN_WEIGHT = 0.5;

/** Current at `now` (epoch ms): no invalid_at, or one still in the future. */
export function isCurrent(m: Pick<MemoryMessage, 'invalid_at'>, now: number): boolean {
  return m.invalid_at === null || m.invalid_at > now;
}

/** Whether a turn with these extracted items is stale at `now`: it has facts, and none is current. */
export function isStaleTurn(items: Pick<MemoryMessage, 'message_type' | 'invalid_at'>[], now: number): boolean {
  const facts = items.filter((m) => m.message_type === 'semantic');
  return facts.length > 0 && facts.every((f) => !isCurrent(f, now));
}

/** The ids of the stale turns among `messages` (raw ones only are looked at), at `now`: one lookup per memory. */
export async function staleTurns(index: MemoryIndex, messages: MemoryMessage[], now: number): Promise<Set<number>> {
  const rawIds = new Map<string, number[]>();
  for (const m of messages) if (m.message_type === 'raw') rawIds.set(m.memory_id, [...(rawIds.get(m.memory_id) ?? []), m.message_id]);
  const itemsBySource = new Map<number, MemoryMessage[]>();
  const found = await Promise.all([...rawIds].map(([memoryId, ids]) => index.itemsOf(memoryId, ids)));
  for (const item of found.flat()) itemsBySource.set(item.source_id, [...(itemsBySource.get(item.source_id) ?? []), item]);
  return new Set([...rawIds.values()].flat().filter((id) => isStaleTurn(itemsBySource.get(id) ?? [], now)));
}
