import type { MemoryIndex, MemoryMessage, MemoryUsage } from '../../index/memories/memory-index.js';

/** Top-level messages per list page (each with the items extracted from it). */
const PAGE = 100;

export interface MemoryToCopy {
  id: string;
  /** The highest message id the metadata still names (memory tasks): the target never gives it out again. */
  idsUsedThrough: number;
}

export interface CopiedMessages {
  memories: number;
  messages: number;
  bytes: number;
  /** The source's recount per memory, for the verification. */
  perMemory: Map<string, MemoryUsage>;
}

/**
 * Copies every message of every memory through the MemoryIndex port: the source's `list` (top-level
 * messages with their extracted items, forgotten and disabled ones included), page by page, into the
 * target's `importMessages` (ids, sizes and times kept; a rerun replaces instead of duplicating).
 */
export async function copyMessages(source: MemoryIndex, target: MemoryIndex, memories: MemoryToCopy[], progress: (done: CopiedMessages) => void): Promise<CopiedMessages> {
  const state: CopiedMessages = { memories: 0, messages: 0, bytes: 0, perMemory: new Map() };
  for (const memory of memories) {
    for (let page = 1; ; page++) {
      const listed = await source.list(memory.id, { page, pageSize: PAGE });
      const batch = new Map<number, MemoryMessage>();
      for (const m of [...listed.messages, ...[...listed.extracted.values()].flat()]) batch.set(m.message_id, m);
      await target.importMessages(memory.id, [...batch.values()], { idsUsedThrough: memory.idsUsedThrough });
      state.messages += batch.size;
      for (const m of batch.values()) state.bytes += m.size;
      if (listed.messages.length < PAGE) break;
    }
    state.perMemory.set(memory.id, await source.recount(memory.id));
    state.memories++;
    progress(state);
  }
  return state;
}

/** Memories whose messages or size total in the target differ from the source's, described. */
export async function messageMismatches(target: MemoryIndex, perMemory: Map<string, MemoryUsage>): Promise<string[]> {
  const wrong: string[] = [];
  for (const [memoryId, expected] of perMemory) {
    const counted = await target.recount(memoryId);
    const kept = await target.usage(memoryId);
    for (const [what, got] of [['messages', counted], ['size total', kept]] as const) {
      if (got.messages !== expected.messages || got.bytes !== expected.bytes) {
        wrong.push(`memory ${memoryId}: ${what} ${got.messages} messages / ${got.bytes} bytes in the target, ${expected.messages} / ${expected.bytes} in the source`);
      }
    }
  }
  return wrong;
}
