import type { MetaStore } from '../src/store/index.js';
import type { ChunkIndex } from '../src/index/chunks/chunk-index.js';
import type { BlobStore } from '../src/blobs/types.js';
import type { ModelClients } from '../src/services/model-clients.js';
import type { RunEvents } from '../src/events/types.js';
import type { MemoryIndex } from '../src/index/memories/memory-index.js';
import type { MemoryTasks } from '../src/memories/types.js';
import type { UrlGuard } from '../src/services/mcp-servers.js';
import type { UrlPolicy } from '../src/agents/io/ssrf.js';
import type { CodeLimits } from '../src/agents/io/sandbox/index.js';
import type { DocumentParsers } from '../src/parsing/parser-pool.js';
import type { RetrievalService } from '../src/services/retrieval.js';
import type { MemoryService } from '../src/services/memories.js';
import type { AgentRunControl } from '../src/services/agent-sessions.js';
import type { AgentScheduleControl } from '../src/services/agent-schedules.js';

/** What activities may touch: the ports, never concrete implementations. */
export interface ActivityDeps {
  store: MetaStore;
  index: ChunkIndex;
  blobs: BlobStore;
  models: ModelClients;
  events: RunEvents;
  /** The SSRF guard: checked before connecting to a URL a user configured. */
  urlGuard: UrlGuard;
  /** What agents' Invoke may call (the SSRF policy) and CodeExec's limits. */
  agentLimits: { urls: UrlPolicy; code: CodeLimits };
  /** Memory messages (hybrid-indexed, like the chunks). */
  memories: MemoryIndex;
  /** Starts memory extraction workflows from inside an activity (e.g. an agent's Message component). */
  memoryTasks: MemoryTasks;
  /** Extracts and chunks files in parser processes, under the configured ceilings and limits. */
  parsers: DocumentParsers;
  /** The most turns of one memory extracted in one model call (CAIRN_MEMORY_EXTRACTION_BATCH). */
  memoryExtractionBatch: number;
  /** Chat-model calls one enrichment step makes at once (CAIRN_ENRICH_CONCURRENCY). */
  enrichConcurrency: number;
  /** Dataset retrieval for agents' Retrieval components and tools: the API's service, so it reads as /retrieval does. */
  agentRetrieval: Pick<RetrievalService, 'retrieve'>;
  /** Memories for agents: search (Retrieval from memory) and adding turns (a Message's memory_ids). */
  agentMemories: Pick<MemoryService, 'searchForAgent' | 'addTurn'>;
  /** Agent turns started from an activity (a schedule's run), through the worker's own Temporal client. */
  agentRuns: AgentRunControl;
  /** Agents' schedules, from an activity (a run whose agent is gone deletes its schedule). */
  agentSchedules: AgentScheduleControl;
}
