/**
 * The text a model sees for memory hits (a Retrieval component or tool reading memories): the current facts
 * (semantic items) first, newest first, then the other hits (events, how-tos, raw turns) in the search's order,
 * each with the date it became true, so the model can tell a fresh fact from an old one. The search only returns
 * current items by default (invalid_at not passed), so an updated or retracted fact never reaches the prompt.
 */

/** What the formatter reads of a search hit (MemoryService.searchForAgent's message dict). */
export interface RecalledMessage {
  message_type: string;
  content: string;
  /** Unix seconds, or null. */
  valid_at: number | null;
}

const LABEL: Record<string, string> = { semantic: 'fact', episodic: 'event', procedural: 'how-to', raw: 'conversation' };

const date = (seconds: number | null) => (seconds === null ? 'unknown date' : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'));

/** Facts first (newest first), then the rest in their given order. */
export function recallOrder<T extends RecalledMessage>(hits: T[]): T[] {
  const facts = hits.filter((h) => h.message_type === 'semantic').sort((a, b) => (b.valid_at ?? 0) - (a.valid_at ?? 0));
  return [...facts, ...hits.filter((h) => h.message_type !== 'semantic')];
}

export function recallText(hits: RecalledMessage[]): string {
  return hits.map((h, i) => `\nMemory ${i} (${LABEL[h.message_type] ?? h.message_type}, valid since ${date(h.valid_at)}):\n${h.content}`).join('\n');
}
