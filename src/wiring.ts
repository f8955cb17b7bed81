import path from 'node:path';
import type { Config } from './config.js';
import type { MetaDb } from './store/db.js';
import { MetaStore } from './store/index.js';
import { FsBlobStore } from './blobs/fs-blob-store.js';
import { SqliteChunkIndex } from './index/sqlite-index.js';
import { ProviderService } from './services/providers.js';
import { ModelClients } from './services/model-clients.js';
import { SqliteRunEvents } from './events/sqlite-run-events.js';
import { checkUrl } from './agents/io/ssrf.js';
import { SqliteMemoryIndex } from './index/memory-sqlite-index.js';
import { activityMemoryTasks } from './engine/memory-tasks.js';
import type { ActivityDeps } from '../activities/deps.js';

/** The one place that picks concrete implementations of the ports from configuration. */
export function buildActivityDeps(config: Config, db: MetaDb): ActivityDeps {
  const store = new MetaStore(db);
  const urls = { allowPrivate: config.allowPrivateUrls, allowList: config.privateUrlAllowList };
  return {
    store,
    index: new SqliteChunkIndex(db.sqlite),
    blobs: new FsBlobStore(path.join(config.dataDir, 'blobs')),
    models: new ModelClients(new ProviderService(store)),
    events: new SqliteRunEvents(db.sqlite),
    memories: new SqliteMemoryIndex(db.sqlite),
    memoryTasks: activityMemoryTasks(config.taskQueue),
    urlGuard: async (url) => {
      await checkUrl(new URL(url), urls, 'MCP server');
    },
    agentLimits: { urls, code: { timeoutMs: config.sandboxTimeoutSec * 1000, memoryMb: config.sandboxMemoryMb } },
  };
}
