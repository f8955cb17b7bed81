import path from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type MetaDb } from './store/db.js';
import { openIndexDatabase, type Sqlite } from './index/sqlite-database.js';
import { MetaStore } from './store/index.js';
import { blobStoreFromConfig } from './blobs/from-config.js';
import { SqliteChunkIndex } from './index/chunks/sqlite-index.js';
import { SqliteReadPool } from './index/chunks/sqlite-read-pool.js';
import { WalCheckpointer } from './index/wal-checkpointer.js';
import { ThreadedSqliteChunkIndex } from './index/chunks/sqlite-threaded-index.js';
import { ProviderService } from './services/providers.js';
import { ModelClients } from './services/model-clients.js';
import { SqliteRunEvents } from './events/sqlite-run-events.js';
import { PgRunEvents } from './events/pg-run-events.js';
import type { RunEvents } from './events/types.js';
import { outboundGuard } from './services/outbound-urls.js';
import { SqliteMemoryIndex } from './index/memories/sqlite-memory-index.js';
import { activityMemoryTasks } from './engine/memory-tasks.js';
import { activityAgentRuns, activityAgentSchedules } from './engine/agent-schedules.js';
import type { ActivityDeps } from '../activities/deps.js';
import type { MilvusLocation } from './index/location.js';
import type { MilvusChunkIndex } from './index/chunks/milvus/milvus-index.js';
import type { MilvusMemoryIndex } from './index/memories/milvus-memory-index.js';
import type { MemoryIndex } from './index/memories/memory-index.js';
import { ParserPool } from './parsing/parser-pool.js';
import { RetrievalService } from './services/retrieval.js';
import { MemoryService } from './services/memories.js';
import type { Logger } from 'pino';
import type { WorkflowClient } from './engine/workflow-client.js';
import { TemporalMemoryTasks } from './engine/memory-tasks.js';
import { DatasetService } from './services/datasets.js';
import { DocumentService } from './services/documents.js';
import { DatasetIndexService } from './services/dataset-indexes.js';
import { datasetIndexData } from './enrichment/index-data.js';
import { GraphViewService } from './enrichment/graph/view.js';
import { MetadataService } from './services/metadata.js';
import { SearchAppService } from './services/searches.js';
import { EmbeddingCheckService } from './services/embedding-check.js';
import { DatasetSearchService } from './services/dataset-search.js';
import { ChunkService } from './services/chunks.js';
import { ChatService } from './services/chats.js';
import { SessionService } from './services/sessions.js';
import { ConversationService } from './services/conversations.js';
import { AgentService } from './services/agents.js';
import { AgentSessionService } from './services/agent-sessions.js';
import { AgentAttachmentService } from './services/agent-attachments.js';
import { AgentCanvasService } from './services/agent-canvas.js';
import { PipelineRerunService } from './services/pipeline-rerun.js';
import { McpServerService } from './services/mcp-servers.js';
import { storeDatasetAccess } from './services/access.js';
import { useBuiltinModelSettings } from './models/builtin/settings.js';

/** The embedded chunk index's cache bounds (CAIRN_CACHE_*). */
export function indexCaches(config: Config) {
  return {
    signBitsCacheBytes: config.caches.signBitsMb * 2 ** 20,
    termFrequencyCacheEntries: config.caches.termFrequencies,
    postingsCacheBytes: config.fullTextMemoryMb * 2 ** 20,
    vectorsCacheBytes: config.vectorsMemoryMb * 2 ** 20,
  };
}

/**
 * The embedded chunk index on the database file: searches on reader threads (CAIRN_INDEX_THREADS), or on
 * the event loop when there are none or the database is in memory (no file for other connections to open).
 */
function embeddedChunkIndex(config: Config, indexDb: Sqlite): SqliteChunkIndex | ThreadedSqliteChunkIndex {
  const caches = indexCaches(config);
  // In-memory full-text copies only on reader threads: their builds take seconds at 100k chunks, which the
  // event loop must never spend (the writer searches only when there are no reader threads).
  const writer = new SqliteChunkIndex(indexDb, { ...caches, postingsCacheBytes: 0 });
  if (config.indexThreads < 1 || indexDb.memory) return writer;
  return new ThreadedSqliteChunkIndex(writer, new SqliteReadPool(indexDb.name, config.indexThreads, caches));
}


/**
 * The embedded index's own connection (chunk index, memory index and, on SQLite metadata, run events):
 * the data dir's cairn.db, which also holds the metadata in the embedded profile.
 */
function openEmbeddedIndexDb(config: Config): Sqlite {
  return openIndexDatabase(path.join(config.dataDir, 'cairn.db'));
}

/** The Milvus chunk index (CAIRN_INDEX=milvus://…); its SDK is loaded only by processes that use it. */
async function openMilvusChunkIndex(location: MilvusLocation): Promise<MilvusChunkIndex> {
  const { MilvusChunkIndex } = await import('./index/chunks/milvus/milvus-index.js');
  return MilvusChunkIndex.connect(location);
}

/** The memory index that goes with the Milvus chunk index: search copies in Milvus, the messages in the metadata database. */
async function openMilvusMemoryIndex(location: MilvusLocation, db: MetaDb): Promise<MilvusMemoryIndex> {
  const { MilvusMemoryIndex } = await import('./index/memories/milvus-memory-index.js');
  return MilvusMemoryIndex.connect(location, db);
}

/** The chunk and memory indexes on Milvus (CAIRN_INDEX=milvus://…). */
interface MilvusIndexes {
  chunks: MilvusChunkIndex;
  memories: MilvusMemoryIndex;
}

/** Run events travel through the metadata database when it is PostgreSQL (shared by every machine). */
function runEvents(db: MetaDb, indexDb: Sqlite): RunEvents {
  return db.dialect === 'postgres' ? new PgRunEvents(db.kysely) : new SqliteRunEvents(indexDb);
}

/** The one place that picks concrete implementations of the ports from configuration; `close` ends what it started. */
function buildActivityDeps(config: Config, db: MetaDb, indexDb: Sqlite, milvus?: MilvusIndexes): ActivityDeps & { close(): Promise<void> } {
  const store = new MetaStore(db);
  const index = milvus?.chunks ?? embeddedChunkIndex(config, indexDb);
  const memories: MemoryIndex = milvus?.memories ?? new SqliteMemoryIndex(indexDb);
  const urls = { allowPrivate: config.allowPrivateUrls, allowList: config.privateUrlAllowList };
  // Parser processes start with the first file, so a process that parses nothing starts none.
  const parsers = new ParserPool({ ...config.parsing.ceilings, limits: config.parsing.limits });
  const outbound = outboundGuard(urls);
  const models = new ModelClients(new ProviderService(store, outbound), config.caches.modelClients);
  const memoryTasks = activityMemoryTasks(config.taskQueue);
  return {
    store,
    index,
    blobs: blobStoreFromConfig(config),
    models,
    events: runEvents(db, indexDb),
    memories,
    memoryTasks,
    agentRetrieval: new RetrievalService(store, storeDatasetAccess(store.datasets), index, models),
    agentMemories: new MemoryService(store, memories, models, memoryTasks),
    agentRuns: activityAgentRuns(config.taskQueue),
    agentSchedules: activityAgentSchedules(config.taskQueue),
    urlGuard: (url) => outbound(url, 'MCP server'),
    agentLimits: { urls, code: { timeoutMs: config.sandboxTimeoutSec * 1000, memoryMb: config.sandboxMemoryMb, keepWarm: config.sandboxWarm } },
    parsers,
    enrichConcurrency: config.enrichConcurrency,
    memoryExtractionBatch: config.memoryExtractionBatch,
    close: async () => {
      await parsers.stop();
      await memories.close();
      await index.close();
    },
  };
}

/** Every backend a Cairn process uses, built from configuration; `close` ends them in reverse order. */
export interface Backends extends ActivityDeps {
  db: MetaDb;
  close(): Promise<void>;
}

/**
 * The backend factory shared by `cairn start`, `cairn worker`, the benches and the tests: opens the
 * metadata database (CAIRN_DATABASE_URL), the embedded index file, the chunk and memory indexes on Milvus
 * when CAIRN_INDEX names one (memory messages then live in the metadata database, their search copies in
 * Milvus: docs/scale-out.md "Memory messages"), the blob store (CAIRN_BLOBS), run events and
 * model clients. On the embedded profile the store and the index share one SQLite
 * connection: two connections in one process would make an index write wait (blocking the event loop)
 * on a metadata transaction that is between two of its statements.
 */
export async function openBackends(config: Config): Promise<Backends> {
  useBuiltinModelSettings(config.builtinModels);
  const indexDb = openEmbeddedIndexDb(config);
  const checkpointer = indexDb.memory ? undefined : new WalCheckpointer(indexDb);
  const closeIndexDb = async () => {
    await checkpointer?.close();
    indexDb.close();
  };
  let db: MetaDb;
  try {
    db = await openDatabase(config.databaseUrl, indexDb);
  } catch (err) {
    await closeIndexDb();
    throw err;
  }
  let milvus: MilvusIndexes | undefined;
  let chunks: MilvusChunkIndex | undefined;
  try {
    if (config.index.kind === 'milvus') {
      chunks = await openMilvusChunkIndex(config.index);
      milvus = { chunks, memories: await openMilvusMemoryIndex(config.index, db) };
    }
  } catch (err) {
    await chunks?.close().catch(() => undefined);
    await db.close();
    await closeIndexDb();
    throw err;
  }
  const deps = buildActivityDeps(config, db, indexDb, milvus);
  return {
    ...deps,
    db,
    async close() {
      await deps.close();
      await db.close();
      await closeIndexDb();
    },
  };
}

/**
 * The API's services over the backends and the workflow client, for `cairn start` (the routes are
 * server.ts's). The activities' services come from buildActivityDeps above, from the same classes.
 */
export function buildApiServices(config: Config, deps: Backends, workflows: WorkflowClient, log: Logger) {
  const { store, index, blobs, models } = deps;
  const providers = models.providers;
  const datasets = new DatasetService(store, providers, workflows, {
    onFailure: (err, ids) => log.error({ err, datasetIds: ids }, 'could not start the deletion workflow; it starts again at the next start'),
  });
  const documents = new DocumentService(store, datasets, index, blobs, workflows);
  const retrieval = new RetrievalService(store, datasets, index, models);
  const chats = new ChatService(store, datasets, providers);
  const sessions = new SessionService(store, chats);
  const conversations = new ConversationService(store, chats, sessions, providers, models, retrieval, log);
  const searchApps = new SearchAppService(store, datasets, providers, conversations);
  const agents = new AgentService(store);
  const agentAttachments = new AgentAttachmentService(store, agents, blobs);
  return {
    providers,
    datasets,
    documents,
    chunks: new ChunkService(store, documents, index, blobs, models),
    retrieval,
    chats,
    sessions,
    conversations,
    searchApps,
    datasetSearch: new DatasetSearchService(retrieval, searchApps),
    agents,
    agentSessions: new AgentSessionService(store, agents, workflows, deps.events, agentAttachments, config.canvasLimits),
    agentCanvas: new AgentCanvasService(store, agents, workflows),
    agentAttachments,
    pipelineRerun: new PipelineRerunService(store, datasets, documents),
    memories: new MemoryService(store, deps.memories, models, new TemporalMemoryTasks(() => workflows.client, config.taskQueue)),
    datasetIndexes: new DatasetIndexService(store, datasets, workflows, datasetIndexData(deps)),
    metadata: new MetadataService(store, datasets, index),
    embeddingCheck: new EmbeddingCheckService({
      datasets,
      documents: store.documents,
      index,
      models: providers,
      embedder: (tenantId, modelId) => models.embedding(tenantId, modelId),
    }),
    graphView: new GraphViewService(store, datasets),
    mcpServers: new McpServerService(store, deps.urlGuard),
  };
}
