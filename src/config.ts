import path from 'node:path';

/** Runtime configuration, read from environment variables with defaults that run locally. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** host:port of an external Temporal server; when unset Cairn starts a dev server as a child process. */
  temporalAddress?: string;
  temporalNamespace: string;
  temporalUiPort: number;
  /** Port of the child Temporal dev server's frontend. */
  temporalPort: number;
  taskQueue: string;
  /** Repo root: where .venv and the workflow bundle live. */
  rootDir: string;
  logLevel: string;
  /** Run the Temporal worker in the API process. */
  embeddedWorker: boolean;
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
}

const rootDir = path.resolve(new URL('..', import.meta.url).pathname);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(env.CAIRN_DATA_DIR ?? path.join(process.cwd(), 'data'));
  return {
    host: env.HOST ?? '127.0.0.1',
    port: intFrom(env.PORT, 9380),
    dataDir,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    temporalUiPort: intFrom(env.TEMPORAL_UI_PORT, 8233),
    temporalPort: intFrom(env.TEMPORAL_PORT, 7233),
    taskQueue: env.CAIRN_TASK_QUEUE ?? 'cairn',
    rootDir,
    logLevel: env.LOG_LEVEL ?? 'info',
    embeddedWorker: env.CAIRN_EMBEDDED_WORKER !== 'false',
    jsonLimit: intFrom(env.CAIRN_JSON_LIMIT, 1024 * 1024),
    uploadLimit: intFrom(env.CAIRN_UPLOAD_LIMIT, 100 * 1024 * 1024),
    allowPrivateUrls: /^(1|true|yes|on)$/i.test(env.CAIRN_ALLOW_PRIVATE_URLS ?? ''),
    privateUrlAllowList: (env.CAIRN_PRIVATE_URL_ALLOWLIST ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    sandboxTimeoutSec: Math.max(1, intFrom(env.CAIRN_SANDBOX_TIMEOUT, 60)),
    sandboxMemoryMb: Math.max(16, intFrom(env.CAIRN_SANDBOX_MEMORY_MB, 256)),
  };
}

function intFrom(value: string | undefined, fallback: number): number {
  const n = value === undefined || value === '' ? NaN : Number(value);
  return Number.isInteger(n) ? n : fallback;
}
