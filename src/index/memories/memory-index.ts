/**
 * The memory index port: where memory messages live, indexed for hybrid full-text + vector search.
 * A sibling of ChunkIndex (../chunks/chunk-index.ts): embedded (SQLite FTS5 + sqlite-vec in the service's database
 * file) now; a scale-out implementation moves memory messages along with the chunks.
 *
 * The index owns the message ids (one global integer sequence) and each memory's size total, which it
 * keeps in the same transaction as every insert and removal, so the total is always exact.
 */
import type { MemoryType } from '../../memories/types.js';

export type { MemoryType } from '../../memories/types.js';

/** A stored memory message (spec "Memory message"). Times are epoch milliseconds. */
export interface MemoryMessage {
  message_id: number;
  memory_id: string;
  tenant_id: string;
  message_type: MemoryType;
  /** 0 for a raw message; the raw message's id for an item extracted from it. */
  source_id: number;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  /** L2-normalised embedding (empty when the message has none). */
  vector: number[];
  valid_at: number;
  invalid_at: number | null;
  /** The message that superseded this one (an updated or corrected fact), or null (docs/memories.md "Facts stay current"). */
  replaced_by: number | null;
  forget_at: number | null;
  /** true = enabled (retrieved by search). */
  status: boolean;
  /** Bytes counted against memory_size: content bytes + dims × 8. */
  size: number;
  create_time: number;
}

/** A message to store; the index assigns message_id and computes size. */
export interface NewMemoryMessage {
  message_type: MemoryType;
  source_id: number;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  vector: number[];
  valid_at: number;
  invalid_at?: number | null;
  /**
   * Optional identity of a raw message within its memory (e.g. an agent turn): adding a message whose
   * key is already stored adds nothing and returns the stored message's id.
   */
  dedup_key?: string;
}

export interface AddOptions {
  /** The memory's memory_size: FIFO removes messages so that the total stays within it. */
  limit: number;
  tenantId: string;
  /**
   * Exactly-once guard for the items extracted from one raw message: when a previous call with the same
   * source id completed, nothing is added (`alreadyStored`); otherwise the guard is recorded in the same
   * transaction as the messages.
   */
  onceForSource?: number;
}

export interface AddResult {
  /** The ids of the given messages, in order (a deduplicated message: the id stored before). */
  messageIds: number[];
  /** Ids removed by FIFO to make room. */
  evicted: number[];
  alreadyStored: boolean;
}

export interface MemoryUsage {
  /** Sum of the sizes of the memory's messages, as kept by the write transactions. */
  bytes: number;
  messages: number;
}

export interface MemorySearchFilter {
  memoryIds: string[];
  agentId?: string;
  sessionId?: string;
  userId?: string;
  /**
   * When set, only messages still current at this time (epoch ms): invalid_at null or later. Unset, the
   * invalidated history is included too (include_invalid).
   */
  currentAt?: number;
}

/** A search hit with what scoring needs, without loading the whole message. */
export interface MemoryCandidate {
  message_id: number;
  /** Full-text: the engine's own BM25 relevance (> 0, higher is better). Vector: cosine in -1..1. */
  score: number;
}

/**
 * What an index's searches examined, summed since it opened: the rows its full-text and vector searches
 * stepped through before filters and limits (the embedded index: FTS5 matches and vectors compared; the
 * scale-out index: Milvus hits re-checked against the ledger). A search within one memory examines at most
 * what that memory holds, whatever the rest of the index holds (tests and bench/memory read it).
 */
export interface MemoryScanCounters {
  examined: number;
}

export interface MemoryListQuery {
  agentIds?: string[];
  /** Case-insensitive substring of the session id. */
  sessionKeywords?: string;
  page: number;
  pageSize: number;
}

export interface MemoryRecentQuery extends MemorySearchFilter {
  limit: number;
}

export interface MemoryIndex {
  /** Stores messages in one transaction, removing messages by FIFO first when they would not fit. */
  add(memoryId: string, messages: NewMemoryMessage[], options: AddOptions): Promise<AddResult>;
  /** Removes messages by FIFO until the memory's total is within `limit` (after memory_size shrinks); returns their ids. */
  fitWithin(memoryId: string, limit: number): Promise<number[]>;
  get(memoryId: string, messageId: number): Promise<MemoryMessage | undefined>;
  /** The messages found, in the order of `ids`. */
  getMany(ids: number[]): Promise<MemoryMessage[]>;
  /** Sets forget_at (kept when already set); false when the message does not exist. */
  forget(memoryId: string, messageId: number, at: number): Promise<boolean>;
  setStatus(memoryId: string, messageId: number, status: boolean): Promise<boolean>;
  /**
   * Marks a message no longer current: invalid_at = `at` (an earlier invalid_at is kept) and replaced_by =
   * `replacedBy` (null: retracted, nothing replaces it). Never deletes. False when the message does not exist.
   */
  invalidate(memoryId: string, messageId: number, at: number, replacedBy: number | null): Promise<boolean>;
  /** The items extracted from these raw messages of the memory, by source id, then in id order. */
  itemsOf(memoryId: string, sourceIds: number[]): Promise<MemoryMessage[]>;
  /** Removes messages (and their size from the total); returns how many were removed. */
  remove(memoryId: string, messageIds: number[]): Promise<number>;
  /** Removes every message of a memory and its bookkeeping. */
  deleteMemory(memoryId: string): Promise<number>;
  /**
   * Stores messages exactly as another index kept them (message ids, sizes, times, status, forget_at),
   * replacing those of the memory stored under the same ids, and adds their sizes to the memory's total;
   * no FIFO. For moving memories between indexes (`cairn migrate-to`); rerunning it changes nothing.
   * Ids given out by later `add`s are above every imported id and above `options.idsUsedThrough` (ids of
   * messages that are gone but still named elsewhere, such as by a memory task, are never reused).
   */
  importMessages(memoryId: string, messages: MemoryMessage[], options?: { idsUsedThrough?: number }): Promise<void>;
  usage(memoryId: string): Promise<MemoryUsage>;
  /** The total counted from the messages themselves (for checks and tests). */
  recount(memoryId: string): Promise<MemoryUsage>;
  /**
   * Top-level messages of a memory newest first (raw messages, and extracted items whose raw message is
   * gone), each page with the items extracted from its raw messages.
   */
  list(memoryId: string, query: MemoryListQuery): Promise<{ total: number; messages: MemoryMessage[]; extracted: Map<number, MemoryMessage[]> }>;
  /** Most recent by valid_at; forgotten messages hidden, disabled ones included. */
  recent(query: MemoryRecentQuery): Promise<MemoryMessage[]>;
  /** Best BM25 matches among searchable messages (enabled, not forgotten), best first. */
  fullText(query: string, filter: MemorySearchFilter, limit: number): Promise<MemoryCandidate[]>;
  /** Nearest searchable messages by cosine among those with a vector of the same dimension, best first. */
  vectorSearch(vector: number[], filter: MemorySearchFilter, limit: number): Promise<MemoryCandidate[]>;
  /** Cosine (-1..1) of each message's vector with `vector`; messages without one of that dimension are absent. */
  cosineSimilarities(ids: number[], vector: number[]): Promise<Map<number, number>>;
  readonly scans: MemoryScanCounters;
  ping(): Promise<void>;
  /**
   * Ends what the index itself started (a server connection, a background re-analysis); a no-op where it
   * started nothing (a connection given to it belongs to whoever opened it). No call may follow.
   */
  close(): Promise<void>;
}
