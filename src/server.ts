import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createLogger } from './logger.js';
import { openBackends } from './wiring.js';
import { AuthService } from './services/auth.js';
import { DatasetService } from './services/datasets.js';
import { DocumentService } from './services/documents.js';
import { resolveJwtSecret } from './secrets.js';
import { ensureAdmin } from './bootstrap.js';
import { startDevServer, type DevServer } from './engine/dev-server.js';
import { lockDataDir } from './engine/data-dir-lock.js';
import { WorkflowClient } from './engine/workflow-client.js';
import { describeQueues, startWorkers } from './engine/worker.js';
import { roleActivities } from '../activities/roles.js';
import { createHttpApp } from './api/app.js';
import { admissionGates, withAdmission } from './api/admission.js';
import { systemRoutes } from './api/routers/system.js';
import { cacheSizes } from './observability/caches.js';
import { accountRoutes } from './api/routers/accounts.js';
import { datasetRoutes } from './api/routers/datasets.js';
import { datasetIndexRoutes } from './api/routers/dataset-indexes.js';
import { DatasetIndexService } from './services/dataset-indexes.js';
import { datasetIndexData } from './enrichment/index-data.js';
import { graphRoutes } from './api/routers/graph.js';
import { GraphViewService } from './enrichment/graph/view.js';
import { metadataRoutes } from './api/routers/metadata.js';
import { MetadataService } from './services/metadata.js';
import { documentRoutes } from './api/routers/documents.js';
import { chunkRoutes } from './api/routers/chunks.js';
import { retrievalRoutes } from './api/routers/retrieval.js';
import { searchRoutes } from './api/routers/searches.js';
import { SearchAppService } from './services/searches.js';
import { EmbeddingCheckService } from './services/embedding-check.js';
import { DatasetSearchService } from './services/dataset-search.js';
import { providerRoutes } from './api/routers/providers.js';
import { ChunkService } from './services/chunks.js';
import { RetrievalService } from './services/retrieval.js';
import { chatRoutes } from './api/routers/chats.js';
import { openaiRoutes } from './api/routers/openai.js';
import { openaiModelRoutes } from './api/routers/openai-models.js';
import { ChatService } from './services/chats.js';
import { SessionService } from './services/sessions.js';
import { ConversationService } from './services/conversations.js';
import type { RouteSpec } from './api/routes.js';
import { withMcp } from './mcp/http-transport.js';
import { builtinChatStatus, checkBuiltinChat } from './models/builtin/chat-model.js';
import { AgentService } from './services/agents.js';
import { AgentSessionService } from './services/agent-sessions.js';
import { agentRoutes } from './api/routers/agents.js';
import { MemoryService } from './services/memories.js';
import { memoryRoutes } from './api/routers/memories.js';
import { TemporalMemoryTasks } from './engine/memory-tasks.js';
import { McpServerService } from './services/mcp-servers.js';
import { mcpServerRoutes } from './api/routers/mcp-servers.js';
import { metricsRoutes } from './api/routers/metrics.js';

export interface Cairn {
  url: string;
  /** Set on the first start: the admin API key that was created. */
  adminApiKey?: string;
  /** The admin's e-mail and generated password, on the first start only. */
  admin?: { email: string; password: string };
  temporalAddress: string;
  log: Logger;
  stop(): Promise<void>;
}

/** Starts everything the embedded default needs: database, Temporal (dev server unless configured), workers (unless --no-worker), HTTP. */
export async function startCairn(config: Config, options: { log?: Logger } = {}): Promise<Cairn> {
  const log = options.log ?? createLogger(config.logLevel);
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        log.warn({ err }, 'error while stopping');
      }
    }
    cleanups.length = 0;
  };
  try {
    fs.mkdirSync(config.dataDir, { recursive: true });
    // One Cairn per data directory; `cairn worker` processes share it without the lock.
    const lock = await lockDataDir(config.dataDir);
    cleanups.push(async () => lock.release());
    const deps = await openBackends(config);
    cleanups.push(() => deps.close());
    const { store, index } = deps;

    let temporalAddress = config.temporalAddress;
    if (!temporalAddress) {
      const dev: DevServer = await startDevServer({
        rootDir: config.rootDir,
        temporalBin: config.temporalBin,
        dbFile: path.join(config.dataDir, 'temporal.db'),
        port: config.temporalPort,
        uiPort: config.temporalUiPort || undefined,
        warn: (message) => log.warn(message),
      });
      cleanups.push(() => dev.stop());
      temporalAddress = dev.address;
      log.info({ address: temporalAddress, ui: config.temporalUiPort ? `http://127.0.0.1:${config.temporalUiPort}` : undefined }, 'temporal dev server started');
    }
    const workflows = await WorkflowClient.connect(temporalAddress, config.temporalNamespace, config.taskQueue);
    cleanups.push(() => workflows.close());

    if (config.embeddedWorker) {
      const worker = await startWorkers({
        address: temporalAddress,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        rootDir: config.rootDir,
        roles: config.workerRoles,
        parserProcesses: config.parsing.ceilings.processes,
        activitiesOf: (role) => roleActivities(role, deps),
        onFatal: (err) => log.error({ err }, 'temporal worker stopped'),
      });
      cleanups.push(() => worker.stop());
      log.info({ queues: worker.queues }, `temporal workers polling ${describeQueues(worker.queues)}`);
    } else {
      log.info('API only: this process runs no Temporal worker (`cairn worker` processes run the workflows)');
    }

    const auth = new AuthService(store, await resolveJwtSecret(config, store));
    const providers = deps.models.providers;
    const datasets = new DatasetService(store, providers, workflows, {
      onFailure: (err, ids) => log.error({ err, datasetIds: ids }, 'could not start the deletion workflow; it starts again at the next start'),
    });
    const documents = new DocumentService(store, datasets, index, deps.blobs, workflows);
    const chunks = new ChunkService(store, documents, index, deps.blobs, deps.models);
    const retrieval = new RetrievalService(store, datasets, index, deps.models);
    const chats = new ChatService(store, datasets, providers);
    const sessions = new SessionService(store, chats);
    const conversations = new ConversationService(store, chats, sessions, providers, deps.models, retrieval, log);
    const searchApps = new SearchAppService(store, datasets, providers, conversations);
    const agents = new AgentService(store);
    const agentSessions = new AgentSessionService(store, agents, workflows, deps.events);
    const memories = new MemoryService(store, deps.memories, deps.models, new TemporalMemoryTasks(() => workflows.client, config.taskQueue));
    // Event logs of finished runs are read within seconds; an hour is plenty for a slow reader.
    const purge = setInterval(() => void deps.events.purgeOlderThan(60 * 60 * 1000).catch(() => undefined), 10 * 60 * 1000);
    purge.unref();
    cleanups.push(async () => clearInterval(purge));

    const datasetIndexes = new DatasetIndexService(store, datasets, workflows, datasetIndexData(deps));
    const routes: RouteSpec[] = [];
    routes.push(
      ...systemRoutes(
        [
          { name: 'database', check: () => store.ping() },
          { name: 'index', check: () => index.ping() },
          { name: 'temporal', check: () => workflows.ping() },
          { name: 'chat_model', check: () => checkBuiltinChat(), details: () => ({ ...builtinChatStatus() }) },
        ],
        () => routes,
        config.temporalUiUrl ?? (!config.temporalAddress && config.temporalUiPort ? `http://127.0.0.1:${config.temporalUiPort}` : undefined),
        () => cacheSizes({ index, modelClients: deps.models }),
      ),
      ...accountRoutes(auth),
      ...metadataRoutes(new MetadataService(store, datasets, index)),
      ...datasetRoutes(
        datasets,
        new EmbeddingCheckService({
          datasets,
          documents: store.documents,
          index,
          models: providers,
          embedder: (tenantId, modelId) => deps.models.embedding(tenantId, modelId),
        }),
      ),
      ...datasetIndexRoutes(datasetIndexes),
      ...graphRoutes(new GraphViewService(store, datasets), datasetIndexes),
      ...documentRoutes(documents, config.uploadLimit),
      ...chunkRoutes(chunks),
      ...retrievalRoutes(retrieval, new DatasetSearchService(retrieval, searchApps), searchApps),
      ...searchRoutes(searchApps),
      ...providerRoutes(providers),
      ...chatRoutes(chats, sessions, conversations),
      ...openaiRoutes(conversations),
      ...openaiModelRoutes(chats, agents, providers),
      ...agentRoutes(agents, agentSessions),
      ...memoryRoutes(memories),
      ...mcpServerRoutes(new McpServerService(store, deps.urlGuard)),
      ...metricsRoutes({ documents: store.documents, workflows, index, modelClients: deps.models, log }),
    );
    const app = createHttpApp(withAdmission(routes, admissionGates(config.admission)), auth, log, config.jsonLimit, path.join(config.rootDir, 'dist', 'web'));
    const server = http.createServer(withMcp(app, { auth, services: { datasets, chats, retrieval }, log, jsonLimit: config.jsonLimit }));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    cleanups.push(() => closeServer(server));
    const port = (server.address() as { port: number }).port;

    const created = await ensureAdmin(store, auth, config.dataDir);
    const adminApiKey = created?.apiKey;
    const admin = created ? { email: created.email, password: created.password } : undefined;
    for (const id of await store.datasets.deletingIds()) await workflows.startDeleteDatasets([id]);

    const url = `http://${config.host}:${port}`;
    log.info({ url }, 'cairn started');
    return { url, adminApiKey, admin, temporalAddress, log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
