/**
 * The steps of the memoryExtractionBatches workflow (workflows/memory-batches.ts): the turns of one memory
 * that wait while a model call is in flight are extracted together, up to `maxTurns` in one model call, their
 * items embedded in one call, and each turn stored with its own exactly-once marker and reported on its own
 * task. The one-turn steps it builds on are MemoryExtractor's (memory-extractor.ts).
 */
import type { MetaStore } from '../store/index.js';
import type { MemoryIndex } from '../index/memories/memory-index.js';
import type { ModelClients } from './model-clients.js';
import { nowMs } from '../time.js';
import { extractedTypesOf, typesOf } from '../memories/types.js';
import { assembleSystemPrompt } from '../memories/prompts.js';
import { InvalidExtractionError, type ExtractedItem } from '../memories/extraction.js';
import { buildBatchUserPrompt, parseBatchExtraction, UnattributedItemsError } from '../memories/batch-extraction.js';
import { cleanExtraction } from '../memories/structured.js';
import { isBuiltinModelId } from '../models/builtin/spec.js';
import { MemoryExtractor, sourceGone, type LoadedTurn } from './memory-extractor.js';

/** Of the turns waiting: those taken into the next batch, and those settled at once (done, failed or ended before). */
export interface BatchStart {
  batch: number[];
  settled: number[];
}

/** One turn's extraction: its items and what cleaning dropped, or why it cannot be extracted (the turn fails). */
export type TurnExtraction = TurnItems | TurnError;
export interface TurnItems {
  messageId: number;
  items: ExtractedItem[];
  note: string;
}
export interface TurnError {
  messageId: number;
  error: string;
}

/** One turn's store: as MemoryExtractor.storeItems, or why it failed (nothing of that turn stored). */
export type TurnStored = { messageId: number; stored: number; evicted: number; alreadyStored: boolean } | TurnError;

/** How many earlier facts one turn's new facts replaced, or why they were not checked. */
export interface TurnReconciled {
  messageId: number;
  replaced: number;
  error?: string;
}

/** The task's final state: done (progress 1) or failed (-1, the message is the reason). */
export interface TurnEnd {
  messageId: number;
  message: string;
  failed?: boolean;
}

/** Failures that concern one turn only: the others of its batch go on. */
const TURN_FAILURES = new Set(['InvalidExtractionError', 'MemoryFullError', 'SourceGoneError']);

function turnFailure(err: unknown): string {
  if (err instanceof Error && TURN_FAILURES.has(err.name)) return err.message;
  throw err;
}

export class MemoryBatchExtractor extends MemoryExtractor {
  constructor(
    store: MetaStore,
    index: MemoryIndex,
    models: ModelClients,
    /** CAIRN_MEMORY_EXTRACTION_BATCH: the most turns one model call extracts. */
    private readonly maxTurns: number,
  ) {
    super(store, index, models);
  }

  /**
   * The built-in model extracts one turn per call: its answer is held to a one-turn grammar, and a 135M model
   * does not keep turns apart. Others take up to maxTurns. An unresolvable model gets one (its call fails with the reason).
   */
  private async turnsPerCall(tenantId: string, llmId: string): Promise<number> {
    const id = await this.models.chat(tenantId, llmId).then((c) => c.id, () => llmId);
    return isBuiltinModelId(id) ? 1 : this.maxTurns;
  }

  /**
   * Takes the next batch from the turns waiting (in their order): a memory that extracts nothing marks them all
   * done; a turn whose memory or raw message is gone fails; a turn whose task already ended (a repeated signal)
   * is left as it is. Turns beyond the batch size stay waiting.
   */
  async beginBatch(memoryId: string, waiting: number[]): Promise<BatchStart> {
    const memory = await this.store.memories.byId(memoryId);
    const tasks = await this.store.memories.tasks(memoryId, waiting);
    const types = memory ? extractedTypesOf(memory.memory_type) : [];
    const limit = memory && types.length ? await this.turnsPerCall(memory.tenant_id, memory.llm_id) : 0;
    const start: BatchStart = { batch: [], settled: [] };
    for (const messageId of waiting) {
      const task = tasks.get(messageId);
      if (task && (task.progress >= 1 || task.progress < 0)) {
        start.settled.push(messageId);
        continue;
      }
      if (memory && types.length && start.batch.length >= limit) continue;
      const outcome = await this.begin(memoryId, messageId);
      (outcome === 'extract' ? start.batch : start.settled).push(messageId);
    }
    return start;
  }

  /**
   * Asks the memory's chat model for the items of the batch's turns in one call (one turn: exactly the one-turn
   * prompt). An answer that is not the JSON object, or whose items do not say their turn, is retried turn by
   * turn, so one turn's unusable answer fails only that turn. Model errors are thrown (the step is retried,
   * then every turn of the batch fails with the reason).
   */
  async extractBatch(memoryId: string, messageIds: number[], options: { attempt?: number; signal?: AbortSignal } = {}): Promise<TurnExtraction[]> {
    const loaded = await Promise.all(messageIds.map((id) => this.load(memoryId, id)));
    const present = loaded.filter((l): l is LoadedTurn => l !== undefined);
    const gone = messageIds.filter((_, i) => !loaded[i]).map((messageId) => ({ messageId, error: sourceGone().message }));
    if (present.length <= 1) return [...gone, ...(await this.extractEach(memoryId, present.map((l) => l.raw.message_id), options))];
    const { memory } = present[0]!;
    const types = extractedTypesOf(memory.memory_type);
    const attempt = options.attempt && options.attempt > 1 ? ` (attempt ${options.attempt})` : '';
    for (const { raw } of present) {
      await this.report(memoryId, raw.message_id, 0.35, `Asking ${memory.llm_id} to extract ${types.join(', ')} items (${present.length} turns in one call)${attempt}`);
    }
    const chat = await this.models.chat(memory.tenant_id, memory.llm_id);
    const system = memory.system_prompt || assembleSystemPrompt(typesOf(memory.memory_type));
    const turns = present.map(({ raw }) => ({ conversation: raw.content, conversationTime: raw.valid_at }));
    const answer = await chat.complete(
      [{ role: 'system', content: system }, { role: 'user', content: buildBatchUserPrompt({ userPrompt: memory.user_prompt, turns, now: nowMs() }) }],
      { temperature: memory.temperature, signal: options.signal },
    );
    let perTurn: ExtractedItem[][];
    try {
      perTurn = parseBatchExtraction(answer, types, turns);
    } catch (err) {
      if (!(err instanceof InvalidExtractionError || err instanceof UnattributedItemsError)) throw err;
      return [...gone, ...(await this.extractEach(memoryId, present.map((l) => l.raw.message_id), options))];
    }
    const extracted: TurnExtraction[] = [];
    for (const [i, { raw }] of present.entries()) {
      const cleaned = cleanExtraction(perTurn[i]!, system);
      const counts = types.map((t) => `${cleaned.items.filter((it) => it.type === t).length} ${t}`).join(', ');
      await this.report(memoryId, raw.message_id, 0.5, `The model answered: ${cleaned.items.length} item(s) (${counts})${cleaned.note ? `; ${cleaned.note}` : ''}`);
      extracted.push({ messageId: raw.message_id, ...cleaned });
    }
    return [...gone, ...extracted];
  }

  /** The turns one model call each (the one-turn prompt); a turn's unusable answer fails that turn only. */
  private async extractEach(memoryId: string, messageIds: number[], options: { attempt?: number; signal?: AbortSignal }): Promise<TurnExtraction[]> {
    const out: TurnExtraction[] = [];
    for (const messageId of messageIds) {
      try {
        out.push({ messageId, ...(await this.extract(memoryId, messageId, options)) });
      } catch (err) {
        out.push({ messageId, error: turnFailure(err) });
      }
    }
    return out;
  }

  /**
   * Embeds the items of every turn in one call, then stores each turn's items in its own transaction with its
   * own exactly-once marker (a retried step stores nothing twice). A turn whose raw message is gone or whose
   * item cannot fit fails alone.
   */
  async storeBatch(memoryId: string, turns: { messageId: number; items: ExtractedItem[] }[]): Promise<TurnStored[]> {
    const memory = await this.store.memories.byId(memoryId);
    if (!memory) throw sourceGone();
    const all = turns.flatMap((t) => t.items);
    for (const t of turns.filter((t) => t.items.length)) {
      await this.report(memoryId, t.messageId, 0.65, `Embedding ${t.items.length} item(s) with ${memory.embd_id}${turns.length > 1 ? ` (${all.length} items of ${turns.length} turns in one call)` : ''}`);
    }
    const vectors = all.length ? await (await this.models.embedding(memory.tenant_id, memory.embd_id)).embed(all.map((i) => i.content)) : [];
    const out: TurnStored[] = [];
    let offset = 0;
    for (const { messageId, items } of turns) {
      const own = vectors.slice(offset, offset + items.length);
      offset += items.length;
      try {
        const raw = await this.index.get(memoryId, messageId);
        if (!raw) throw sourceGone();
        out.push({ messageId, ...(await this.addItems({ memory, raw }, items, own)) });
      } catch (err) {
        out.push({ messageId, error: turnFailure(err) });
      }
    }
    // Deleted while we stored: leave nothing behind.
    if (!(await this.store.memories.byId(memoryId))) await this.index.deleteMemory(memoryId);
    return out;
  }

  /**
   * Facts stay current, turn after turn in the batch's order (see MemoryExtractor.reconcileFacts). An unreadable
   * answer about one turn's facts leaves that turn's earlier facts unchecked (`error`) and the next turns go on;
   * a model error is thrown (the step is retried).
   */
  async reconcileBatch(memoryId: string, messageIds: number[], options: { signal?: AbortSignal } = {}): Promise<TurnReconciled[]> {
    const out: TurnReconciled[] = [];
    for (const messageId of messageIds) {
      try {
        const { replaced, unchecked } = await this.reconcileFacts(memoryId, messageId, options);
        out.push({ messageId, replaced, ...(unchecked ? { error: unchecked } : {}) });
      } catch (err) {
        if (!(err instanceof InvalidExtractionError)) throw err;
        out.push({ messageId, replaced: 0, error: err.message });
      }
    }
    return out;
  }

  /** Closes each turn's task: done with its message, or failed with its reason. */
  async endTurns(memoryId: string, ends: TurnEnd[]): Promise<void> {
    for (const end of ends) await (end.failed ? this.fail(memoryId, end.messageId, end.message) : this.finish(memoryId, end.messageId, end.message));
  }
}
