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
  };
}

function intFrom(value: string | undefined, fallback: number): number {
  const n = value === undefined || value === '' ? NaN : Number(value);
  return Number.isInteger(n) ? n : fallback;
}
