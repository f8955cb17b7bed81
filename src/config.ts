import { availableParallelism } from 'node:os';
import path from 'node:path';
import { parseBlobLocation, type BlobLocation } from './blobs/location.js';
import { parseIndexLocation, type IndexLocation } from './index/location.js';
import { assertValidSettings, booleanSetting, configEnv, type SettingsEnv } from './config-schema.js';
import { WORKER_ROLES, parseWorkerRoles, type WorkerRole } from './engine/task-queues.js';

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
  /** Largest JSON body accepted, in bytes. */
  jsonLimit: number;
  /** Largest single uploaded file, in bytes. */
  uploadLimit: number;
  /** Agents' Invoke may reach private, loopback and link-local addresses (SSRF guard off). */
  allowPrivateUrls: boolean;
  /** Hosts (`name`, `*.suffix`) and address ranges (`10.0.0.0/8`) Invoke may reach although not public. */
  privateUrlAllowList: string[];
  /** CodeExec: seconds a script may run (a component's shorter `timeout` wins). */
  sandboxTimeoutSec: number;
  /** CodeExec: memory of a script in MB (JavaScript heap / Python interpreter memory). */
  sandboxMemoryMb: number;
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

export function loadConfig(env: SettingsEnv = configEnv()): Config {
  assertValidSettings(env);
  const dataDir = path.resolve(env.CAIRN_DATA_DIR ?? path.join(process.cwd(), 'data'));
  return {
    host: env.HOST ?? '127.0.0.1',
    port: intFrom(env.PORT, 9380),
    dataDir,
    databaseUrl: env.CAIRN_DATABASE_URL || `sqlite:${path.join(dataDir, 'cairn.db')}`,
    jwtSecret: env.CAIRN_JWT_SECRET || undefined,
    blobs: parseBlobLocation(env, dataDir),
    index: parseIndexLocation(env),
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    temporalUiPort: intFrom(env.TEMPORAL_UI_PORT, 8233),
    temporalUiUrl: env.TEMPORAL_UI_URL || undefined,
    temporalPort: intFrom(env.TEMPORAL_PORT, 7233),
    taskQueue: env.CAIRN_TASK_QUEUE ?? 'cairn',
    rootDir,
    logLevel: env.LOG_LEVEL ?? 'info',
    embeddedWorker: booleanSetting(env.CAIRN_EMBEDDED_WORKER, true),
    workerRoles: env.CAIRN_WORKER_QUEUES?.trim() ? parseWorkerRoles(env.CAIRN_WORKER_QUEUES, 'CAIRN_WORKER_QUEUES') : [...WORKER_ROLES],
    jsonLimit: intFrom(env.CAIRN_JSON_LIMIT, 1024 * 1024),
    uploadLimit: intFrom(env.CAIRN_UPLOAD_LIMIT, 100 * 1024 * 1024),
    allowPrivateUrls: booleanSetting(env.CAIRN_ALLOW_PRIVATE_URLS, false),
    privateUrlAllowList: (env.CAIRN_PRIVATE_URL_ALLOWLIST ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    sandboxTimeoutSec: Math.max(1, intFrom(env.CAIRN_SANDBOX_TIMEOUT, 60)),
    sandboxMemoryMb: Math.max(16, intFrom(env.CAIRN_SANDBOX_MEMORY_MB, 256)),
    ...loadCapacity(env),
    fullTextMemoryMb: Number(env.CAIRN_CACHE_FULLTEXT_MB || 128),
    vectorsMemoryMb: Number(env.CAIRN_CACHE_VECTORS_MB || 512),
    caches: {
      signBitsMb: Number(env.CAIRN_CACHE_SIGN_BITS_MB || 64),
      termFrequencies: intFrom(env.CAIRN_CACHE_TERM_FREQUENCIES, 50_000),
      modelClients: intFrom(env.CAIRN_CACHE_MODEL_CLIENTS, 256),
    },
  };
}

/** Thread and admission defaults follow the CPU count: searches are CPU-bound, model streams are not. */
function loadCapacity(env: SettingsEnv): Pick<Config, 'indexThreads' | 'admission'> {
  const cpus = availableParallelism();
  const lane = ([inFlight, queue, wait]: (keyof SettingsEnv)[], defaults: LaneLimits): LaneLimits => ({
    maxInFlight: Math.max(1, intFrom(env[inFlight!], defaults.maxInFlight)),
    maxQueue: Math.max(0, intFrom(env[queue!], defaults.maxQueue)),
    maxWaitMs: Math.max(0, intFrom(env[wait!], defaults.maxWaitMs)),
  });
  return {
    indexThreads: Math.max(0, intFrom(env.CAIRN_INDEX_THREADS, Math.min(4, cpus))),
    admission: {
      short: lane(['CAIRN_MAX_INFLIGHT', 'CAIRN_MAX_QUEUE', 'CAIRN_MAX_QUEUE_WAIT_MS'], { maxInFlight: 2 * cpus, maxQueue: 8 * cpus, maxWaitMs: 500 }),
      long: lane(['CAIRN_MAX_LONG_INFLIGHT', 'CAIRN_MAX_LONG_QUEUE', 'CAIRN_MAX_LONG_QUEUE_WAIT_MS'], { maxInFlight: 16 * cpus, maxQueue: 4 * cpus, maxWaitMs: 5000 }),
    },
  };
}

function intFrom(value: string | undefined, fallback: number): number {
  const n = value === undefined || value === '' ? NaN : Number(value);
  return Number.isInteger(n) ? n : fallback;
}
