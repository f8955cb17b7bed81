import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createLogger } from './logger.js';
import { buildApiServices, openBackends } from './wiring.js';
import { AuthService } from './services/auth.js';
import { resolveJwtSecret } from './secrets.js';
import { ensureAdmin } from './bootstrap.js';
import { startDevServer, type DevServer } from './engine/dev-server.js';
import { lockDataDir } from './engine/data-dir-lock.js';
import { markChildrenOf, stopOrphanedChildren } from './engine/orphaned-children.js';
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
import { graphRoutes } from './api/routers/graph.js';
import { metadataRoutes } from './api/routers/metadata.js';
import { documentRoutes } from './api/routers/documents.js';
import { chunkRoutes } from './api/routers/chunks.js';
import { retrievalRoutes } from './api/routers/retrieval.js';
import { searchRoutes } from './api/routers/searches.js';
import { providerRoutes } from './api/routers/providers.js';
import { chatRoutes } from './api/routers/chats.js';
import { openaiRoutes } from './api/routers/openai.js';
import { openaiModelRoutes } from './api/routers/openai-models.js';
import type { RouteSpec } from './api/routes.js';
import { withMcp } from './mcp/http-transport.js';
import { builtinChatStatus, checkBuiltinChat } from './models/builtin/chat-model.js';
import { agentRoutes } from './api/routers/agents.js';
import { agentRunRoutes } from './api/routers/agent-runs.js';
import { AgentRunService } from './services/agent-runs.js';
import { agentTriggerRoutes } from './api/routers/agent-triggers.js';
import { AgentWebhookService } from './services/agent-webhooks.js';
import { AgentScheduleService } from './services/agent-schedules.js';
import { TemporalAgentSchedules } from './engine/agent-schedules.js';
import { agentCanvasRoutes } from './api/routers/agent-canvas.js';
import { memoryRoutes } from './api/routers/memories.js';
import { mcpServerRoutes } from './api/routers/mcp-servers.js';
import { metricsRoutes } from './api/routers/metrics.js';
import { LOG_RETENTION } from './events/types.js';
import { startOrphanedRunRepair } from './services/orphaned-runs.js';

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
    // Children of a Cairn killed before it could end them (where the parent-death signal is unavailable):
    // a parser still at work on a file this start will parse again, an embedding process holding memory.
    markChildrenOf(config.dataDir);
    const orphans = await stopOrphanedChildren(config.dataDir);
    if (orphans.length > 0) log.warn({ pids: orphans }, `stopped ${orphans.length} process(es) a previous Cairn on this data dir left running`);
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
        workflowStackTraces: config.workflowStackTraces,
        workflowDeadlockDetection: config.workflowDeadlockDetection,
        parserProcesses: config.parsing.ceilings.processes,
        parserWaitingFiles: config.parsing.ceilings.waitingFiles,
        activitiesOf: (role) => roleActivities(role, deps),
        onFatal: (err) => log.error({ err }, 'temporal worker stopped'),
      });
      cleanups.push(() => worker.stop());
      if (worker.connections.agents) workflows.startAgentRunsEagerly(worker.connections.agents);
      log.info({ queues: worker.queues }, `temporal workers polling ${describeQueues(worker.queues)}`);
    } else {
      log.info('API only: this process runs no Temporal worker (`cairn worker` processes run the workflows)');
    }

    const auth = new AuthService(store, await resolveJwtSecret(config, store), { minPasswordLength: config.minPasswordLength });
    const services = buildApiServices(config, deps, workflows, log);
    const { providers, datasets, documents, chunks, retrieval, chats, sessions, conversations, searchApps, agents, agentSessions, memories, datasetIndexes } = services;
    // Whole logs go, an hour after their run ended (LOG_RETENTION): a long turn's record keeps every step.
    const purge = setInterval(() => void deps.events.purgeLogs(LOG_RETENTION).catch(() => undefined), 10 * 60 * 1000);
    purge.unref();
    cleanups.push(async () => clearInterval(purge));
    // Documents a crash left RUNNING without a workflow are parsed anew once old enough (docs/operations.md).
    cleanups.push(startOrphanedRunRepair(documents, config.orphanedRunAgeSec, log));

    const agentSchedules = new AgentScheduleService(store, agents, new TemporalAgentSchedules(() => workflows.client, config.taskQueue));
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
      ...metadataRoutes(services.metadata),
      ...datasetRoutes(datasets, services.embeddingCheck),
      ...datasetIndexRoutes(datasetIndexes),
      ...graphRoutes(services.graphView, datasetIndexes),
      ...documentRoutes(documents, config.uploadLimit),
      ...chunkRoutes(chunks),
      ...retrievalRoutes(retrieval, services.datasetSearch, searchApps),
      ...searchRoutes(searchApps),
      ...providerRoutes(providers),
      ...chatRoutes(chats, sessions, conversations),
      ...openaiRoutes(conversations),
      ...openaiModelRoutes(chats, agents, providers),
      ...agentCanvasRoutes(services.agentCanvas, services.agentAttachments, services.pipelineRerun, config.uploadLimit),
      ...agentRoutes(agents, agentSessions, {
        deleteAgent: (principal, id) => services.agentAttachments.deleteAgent(principal, id),
        afterDelete: (id) => agentSchedules.forgetAgent(id),
      }),
      ...agentRunRoutes(new AgentRunService(store, agents, agentSessions)),
      ...agentTriggerRoutes(new AgentWebhookService(store, agents, agentSessions), agentSchedules),
      ...memoryRoutes(memories),
      ...mcpServerRoutes(services.mcpServers),
      ...metricsRoutes({ documents: store.documents, memories: store.memories, workflows, index, modelClients: deps.models, log }),
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
    const restoredSchedules = await agentSchedules.restoreMissing();
    if (restoredSchedules) log.info({ count: restoredSchedules }, 'agent schedules missing from Temporal were created again');

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
