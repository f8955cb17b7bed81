/**
 * Several turns in one extraction call (pure: no I/O): the user message that numbers the turns, and the
 * parsing of an answer whose items say which turn they came from.
 *
 * The system prompt stays the memory's own (its fixed OUTPUT parts included): a batch only adds a `turn`
 * field to each item, which the user message asks for. An answer that cannot be attributed (an item without
 * a valid turn number) is an UnattributedItemsError: the caller then extracts the turns one by one, so a
 * model that ignores the numbering costs calls, never a turn's items.
 */
import { MAX_ITEMS_PER_TYPE, type ExtractedType } from './types.js';
import { InvalidExtractionError, normaliseTime, optionalTime, parseJsonObject, type ExtractedItem } from './extraction.js';
import { isoTime } from './prompts.js';

export interface BatchTurn {
  /** The raw message's content (`User Input: …\nAgent Response: …`). */
  conversation: string;
  /** Epoch ms: the turn's own time, valid_at's fallback for its items. */
  conversationTime: number;
}

export class UnattributedItemsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnattributedItemsError';
  }
}

/**
 * The user message of a batch: the memory's user prompt (when set) or the default instruction, the request to
 * number every item with its turn, then each turn with its own time, and the current time.
 */
export function buildBatchUserPrompt(input: { userPrompt?: string | null; turns: readonly BatchTurn[]; now: number }): string {
  const custom = input.userPrompt?.trim();
  const intro = custom ? `${custom}\n\n` : 'Extract the memory items from these conversation turns, following the system instructions.\n';
  const ask = `The ${input.turns.length} turns below are separate exchanges, numbered 1 to ${input.turns.length}. Extract the items of each turn on its own (at most ${MAX_ITEMS_PER_TYPE} per type for each turn) and give every item a "turn" field with the number of the turn it comes from, e.g. {"turn": 2, "content": "...", "valid_at": "...", "invalid_at": null}. When a turn gives no time, use that turn's Conversation Time for valid_at.`;
  const turns = input.turns.map((t, i) => `Turn ${i + 1}\nConversation:\n${t.conversation}\n\nConversation Time: ${isoTime(t.conversationTime)}`).join('\n\n');
  return `${intro}${ask}\n\n${turns}\n\nCurrent Time: ${isoTime(input.now)}`;
}

/** A turn number as the model wrote it (2, "2", "Turn 2"), or undefined. */
function turnNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(/\d+/.exec(value)?.[0]) : NaN;
  return Number.isInteger(n) ? n : undefined;
}

/**
 * The items of a batch answer, per turn (index i = turns[i]), for the memory's types: at most
 * MAX_ITEMS_PER_TYPE of each type per turn, ordinals counted per turn and type, valid_at falling back to the
 * item's own turn's time. Throws InvalidExtractionError for an answer that is not the JSON object, and
 * UnattributedItemsError when an item names no turn of the batch.
 */
export function parseBatchExtraction(answer: string, types: readonly ExtractedType[], turns: readonly BatchTurn[]): ExtractedItem[][] {
  const record = parseJsonObject(answer);
  const perTurn: ExtractedItem[][] = turns.map(() => []);
  for (const type of types) {
    const raw = record[type];
    if (raw === undefined || raw === null) continue;
    if (!Array.isArray(raw)) throw new InvalidExtractionError(`"${type}" in the model's answer must be a list, got ${typeof raw}`);
    for (const entry of raw) {
      const obj = typeof entry === 'string' ? { content: entry } : entry && typeof entry === 'object' ? (entry as Record<string, unknown>) : undefined;
      const content = typeof obj?.content === 'string' ? obj.content.trim() : '';
      if (!content) continue;
      const turn = turnNumber(obj!.turn);
      if (turn === undefined || turn < 1 || turn > turns.length) {
        throw new UnattributedItemsError(`the ${type} item "${content.slice(0, 60)}" names no turn of the ${turns.length} asked about (turn: ${JSON.stringify(obj!.turn ?? null)})`);
      }
      const items = perTurn[turn - 1]!;
      const ordinal = items.filter((i) => i.type === type).length;
      if (ordinal >= MAX_ITEMS_PER_TYPE) continue;
      items.push({ type, ordinal, content, valid_at: normaliseTime(obj!.valid_at, turns[turn - 1]!.conversationTime), invalid_at: optionalTime(obj!.invalid_at) });
    }
  }
  return perTurn;
}
