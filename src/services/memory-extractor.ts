/**
 * The activity side of memories: the steps of the memoryExtraction workflow (workflows/memory-extraction.ts,
 * activities/memories.ts) that turn one raw message into extracted items. The API side is MemoryService
 * (memories.ts).
 */
import type { MetaStore } from '../store/index.js';
import type { MemoryIndex, MemoryMessage, NewMemoryMessage } from '../index/memories/memory-index.js';
import type { MemoryRow } from '../store/memories.js';
import type { ModelClients } from './model-clients.js';
import { nowMs } from '../time.js';
import { extractedTypesOf, typesOf } from '../memories/types.js';
import { assembleSystemPrompt, buildUserPrompt } from '../memories/prompts.js';
import { messageSize, MemoryFullError } from '../memories/size.js';
import { parseExtraction, type ExtractedItem } from '../memories/extraction.js';
import { cleanExtraction, extractionSchema, extractionTokenBudget, type CleanedExtraction } from '../memories/structured.js';
import { isBuiltinModelId } from '../models/builtin/spec.js';
import { searchMessages } from '../memories/search.js';
import {
  FACT_UPDATE_SYSTEM_PROMPT, factUpdateUserPrompt, parseFactDecisions, type FactCandidate,
} from '../memories/fact-updates.js';

/** Similar current facts put to the model for each new semantic item (more only lengthens the question). */
const FACT_CANDIDATES = 5;
/** How similar in meaning (cosine) an existing fact must be to be asked about. */
const FACT_SIMILARITY = 0.2;

/** What reconcileFacts did: how many earlier facts it found updated or contradicted (now replaced). */
export interface ReconcileOutcome {
  replaced: number;
  /** Why the earlier facts were not checked, when they were not (the task's message says it). */
  unchecked?: string;
}

/**
 * Why the built-in chat model does not judge fact updates. Measured on bench/memory-quality (first conversation):
 * SmolLM2-135M called 80 of its 256 items updated by a later one, nearly all wrongly, and the turns behind them
 * then ranked at half, so raw search's recall@10 fell from 0.94 to 0.72 (docs/memories.md "Facts stay current").
 */
export const BUILTIN_FACTS_UNCHECKED = 'the built-in chat model is too small to tell an updated fact from a new one (a stronger chat model checks them)';

export function sourceGone(): Error {
  const err = new Error('the memory or its raw message was removed before extraction finished');
  err.name = 'SourceGoneError';
  return err;
}

/** A raw message with its memory, as the steps read them. */
export interface LoadedTurn {
  memory: MemoryRow;
  raw: MemoryMessage;
}

/**
 * A fact that may be retired by a new one of `validAt` from raw message `sourceId`: one that became true before
 * it, or at the same time from an earlier turn (turns extracted in one batch share their times to the second).
 */
function olderFact(m: { valid_at: number; source_id: number }, validAt: number, sourceId: number): boolean {
  return m.valid_at < validAt || (m.valid_at === validAt && m.source_id < sourceId);
}

export type BeginOutcome = 'extract' | 'done' | 'gone';

/**
 * The steps of the memoryExtraction workflow for one raw message. Each is idempotent: a step that runs
 * again after a crash or retry redoes its work without storing anything twice.
 */
export class MemoryExtractor {
  constructor(
    protected readonly store: MetaStore,
    protected readonly index: MemoryIndex,
    protected readonly models: ModelClients,
  ) {}

  protected report(memoryId: string, messageId: number, progress: number, message: string) {
    return this.store.memories.updateTask(memoryId, messageId, progress, message, nowMs());
  }

  /** The memory and raw message, or undefined when either is gone (deleted, or removed by FIFO). */
  protected async load(memoryId: string, messageId: number): Promise<LoadedTurn | undefined> {
    const memory = await this.store.memories.byId(memoryId);
    const raw = memory ? await this.index.get(memoryId, messageId) : undefined;
    return memory && raw ? { memory, raw } : undefined;
  }

  async begin(memoryId: string, messageId: number): Promise<BeginOutcome> {
    const found = await this.load(memoryId, messageId);
    if (!found) {
      await this.report(memoryId, messageId, -1, 'Failed: the memory or its raw message was removed before extraction');
      return 'gone';
    }
    const types = extractedTypesOf(found.memory.memory_type);
    if (types.length === 0) {
      await this.report(memoryId, messageId, 1, 'Done: raw message stored (the memory extracts no semantic, episodic or procedural items)');
      return 'done';
    }
    await this.report(memoryId, messageId, 0.15, `Extraction started: ${types.join(', ')}`);
    return 'extract';
  }

  /**
   * Asks the memory's chat model for the items of one raw message. The built-in model is held to the
   * extraction's JSON Schema (a grammar), so its answer always parses; every model's items are cleaned of
   * empty, repeated and prompt-copied ones (`note` says what was dropped).
   */
  async extract(memoryId: string, messageId: number, options: { attempt?: number; signal?: AbortSignal } = {}): Promise<CleanedExtraction> {
    const found = await this.load(memoryId, messageId);
    if (!found) throw sourceGone();
    const { memory, raw } = found;
    const types = extractedTypesOf(memory.memory_type);
    const attempt = options.attempt && options.attempt > 1 ? ` (attempt ${options.attempt})` : '';
    await this.report(memoryId, messageId, 0.35, `Asking ${memory.llm_id} to extract ${types.join(', ')} items${attempt}`);
    const chat = await this.models.chat(memory.tenant_id, memory.llm_id);
    const system = memory.system_prompt || assembleSystemPrompt(typesOf(memory.memory_type));
    const structured = isBuiltinModelId(chat.id) ? { json_schema: extractionSchema(types), max_tokens: extractionTokenBudget(types) } : {};
    const answer = await chat.complete(
      [
        { role: 'system', content: system },
        { role: 'user', content: buildUserPrompt({ userPrompt: memory.user_prompt, conversation: raw.content, conversationTime: raw.valid_at, now: nowMs() }) },
      ],
      { temperature: memory.temperature, signal: options.signal, ...structured },
    );
    const cleaned = cleanExtraction(parseExtraction(answer, types, raw.valid_at), system);
    const counts = types.map((t) => `${cleaned.items.filter((i) => i.type === t).length} ${t}`).join(', ');
    await this.report(memoryId, messageId, 0.5, `The model answered: ${cleaned.items.length} item(s) (${counts})${cleaned.note ? `; ${cleaned.note}` : ''}`);
    return cleaned;
  }

  /**
   * Embeds and stores the items with their raw message as source, all in one transaction with the
   * exactly-once marker of the raw message: a second run stores nothing. Every item must fit in the
   * memory on its own, else nothing is stored (MemoryFullError).
   */
  async storeItems(memoryId: string, messageId: number, items: ExtractedItem[]): Promise<{ stored: number; evicted: number; alreadyStored: boolean }> {
    const found = await this.load(memoryId, messageId);
    if (!found) throw sourceGone();
    const { memory } = found;
    let vectors: number[][] = [];
    if (items.length) {
      await this.report(memoryId, messageId, 0.65, `Embedding ${items.length} item(s) with ${memory.embd_id}`);
      const model = await this.models.embedding(memory.tenant_id, memory.embd_id);
      vectors = await model.embed(items.map((i) => i.content));
    }
    const added = await this.addItems(found, items, vectors);
    // Deleted while we stored: leave nothing behind.
    if (!(await this.store.memories.byId(memoryId))) await this.index.deleteMemory(memoryId);
    return added;
  }

  /**
   * Stores the embedded items of one raw message with it as source, in one transaction with the raw message's
   * exactly-once marker: a second call stores nothing (alreadyStored). Every item must fit in the memory on its
   * own, else nothing is stored (MemoryFullError).
   */
  protected async addItems(
    { memory, raw }: LoadedTurn,
    items: ExtractedItem[],
    vectors: number[][],
  ): Promise<{ stored: number; evicted: number; alreadyStored: boolean }> {
    for (const [i, item] of items.entries()) {
      const size = messageSize(item.content, vectors[i]!.length);
      if (size > memory.memory_size) {
        throw new MemoryFullError(`the extracted ${item.type} item "${item.content.slice(0, 60)}" needs ${size} bytes, more than the memory holds (memory_size ${memory.memory_size} bytes); nothing was stored`, size, memory.memory_size);
      }
    }
    if (items.length) await this.report(memory.id, raw.message_id, 0.85, `Storing ${items.length} item(s)`);
    const messages: NewMemoryMessage[] = items.map((item, i) => ({
      message_type: item.type,
      source_id: raw.message_id,
      user_id: raw.user_id,
      agent_id: raw.agent_id,
      session_id: raw.session_id,
      content: item.content,
      vector: vectors[i]!,
      valid_at: item.valid_at,
      invalid_at: item.invalid_at,
    }));
    const added = await this.index.add(memory.id, messages, { limit: memory.memory_size, tenantId: memory.tenant_id, onceForSource: raw.message_id });
    await this.report(memory.id, raw.message_id, 0.95, added.alreadyStored ? 'Items were already stored' : `Stored ${items.length} item(s)`);
    return { stored: added.alreadyStored ? 0 : items.length, evicted: added.evicted.length, alreadyStored: added.alreadyStored };
  }

  /**
   * Facts stay current: for each semantic item extracted from this raw message, the memory's similar current
   * facts (hybrid search with the item's own vector) are put to the chat model in one structured question —
   * adds, updates or contradicts? An updated or contradicted fact gets invalid_at (the new item's valid_at) and
   * replaced_by (the new item); nothing is deleted. Idempotent: a fact once replaced is no longer a candidate.
   * Only older facts (valid_at before the new item's, or the same from an earlier turn) are candidates, so a late
   * extraction of an old turn never retires a newer fact.
   */
  async reconcileFacts(memoryId: string, messageId: number, options: { signal?: AbortSignal } = {}): Promise<ReconcileOutcome> {
    const found = await this.load(memoryId, messageId);
    if (!found) return { replaced: 0 };
    const { memory, raw } = found;
    const now = nowMs();
    const fresh = (await this.index.itemsOf(memoryId, [raw.message_id]))
      .filter((m) => m.message_type === 'semantic' && (m.invalid_at === null || m.invalid_at > now));
    if (fresh.length === 0) return { replaced: 0 };
    const ownIds = new Set(fresh.map((m) => m.message_id));
    const chat = await this.models.chat(memory.tenant_id, memory.llm_id);
    if (isBuiltinModelId(chat.id)) return { replaced: 0, unchecked: BUILTIN_FACTS_UNCHECKED };
    let replaced = 0;
    for (const item of fresh) {
      const candidates = await this.earlierFacts(memoryId, item, raw, ownIds, now);
      if (candidates.length === 0) continue;
      await this.report(memoryId, messageId, 0.97, `Checking "${item.content.slice(0, 60)}" against ${candidates.length} earlier fact(s)`);
      const answer = await chat.complete(
        [{ role: 'system', content: FACT_UPDATE_SYSTEM_PROMPT }, { role: 'user', content: factUpdateUserPrompt(item, candidates) }],
        { temperature: 0, signal: options.signal },
      );
      for (const decision of parseFactDecisions(answer, candidates)) {
        if (decision.relation === 'adds') continue;
        if (await this.index.invalidate(memoryId, decision.message_id, item.valid_at, item.message_id)) replaced++;
      }
    }
    return { replaced };
  }

  /**
   * The current facts a new item may update: the memory's older semantic items nearest to it in meaning, best
   * first. Only semantic items are searched (raw turns and episodic items took most of the places before), and by
   * meaning alone: the facts of one memory share most of their words ("The user …"), so keywords ranked facts by
   * their phrasing (bench/memory-quality, perfect extractor: 28 of the set's 32 replaced facts found, against 26
   * with the search's default keyword weight and 23 when every message type was searched).
   */
  private async earlierFacts(memoryId: string, item: MemoryMessage, raw: MemoryMessage, ownIds: Set<number>, now: number): Promise<FactCandidate[]> {
    const hits = await searchMessages(
      {
        query: item.content, filter: { memoryIds: [memoryId], currentAt: now }, scope: { messageTypes: ['semantic'] },
        similarity_threshold: FACT_SIMILARITY, keywords_similarity_weight: 0, top_n: FACT_CANDIDATES + ownIds.size,
      },
      { index: this.index, embedQuery: async () => item.vector },
    );
    return hits
      .map((h) => h.message)
      .filter((m) => !ownIds.has(m.message_id) && m.source_id !== raw.message_id && olderFact(m, item.valid_at, raw.message_id))
      .slice(0, FACT_CANDIDATES)
      .map((m) => ({ message_id: m.message_id, content: m.content, valid_at: m.valid_at }));
  }

  async finish(memoryId: string, messageId: number, message: string): Promise<void> {
    await this.report(memoryId, messageId, 1, message);
  }

  async fail(memoryId: string, messageId: number, reason: string): Promise<void> {
    await this.report(memoryId, messageId, -1, `Failed: ${reason}`);
  }
}
