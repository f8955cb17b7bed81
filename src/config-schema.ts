import { WORKER_ROLES, parseWorkerRoles } from './engine/task-queues.js';

/**
 * Every environment variable Cairn reads, in one list: the README's configuration table, the
 * docker-compose.yml test and loadConfig's validation all go by it. This module is the only one that
 * touches `process.env` (see configEnv); modules that read a setting lazily (the built-in models, the
 * parser pool, the sandbox) take their values from configEnv() by a name declared here.
 */

/**
 * The long-running `cairn` commands that read settings. The one-shot commands (keys, migrate, backup,
 * restore, migrate-to) load the same configuration as `start`.
 */
export type Command = 'start' | 'worker' | 'mcp';

/** A problem with a value, or undefined when the value is accepted. */
type Check = (value: string) => string | undefined;

export interface Setting {
  name: string;
  /** The default, as the README states it. */
  default: string;
  meaning: string;
  /** The commands that read it. */
  readBy: readonly Command[];
  /**
   * Read only by the workflow and activity code, that is by `cairn worker` and by `cairn start` when it
   * runs the workers in-process: `cairn start --no-worker` never uses it.
   */
  workersOnly?: true;
  /** Every process of a deployment (API replicas and workers) must have the same value: it names shared state. */
  shared?: true;
  /** The commands that refuse to start without it. */
  requiredBy?: readonly Command[];
  /** Older names that are still read. */
  aliases?: readonly string[];
  /** Rejects a value the code cannot use; settings without one are parsed (and refused) by their own parser. */
  check?: Check;
}

const SERVER: readonly Command[] = ['start', 'worker'];

function integer(min: number, max = Number.MAX_SAFE_INTEGER): Check {
  const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
  return (value) => {
    const n = Number(value);
    return Number.isInteger(n) && n >= min && n <= max ? undefined : `expected an integer ${range}`;
  };
}

const positiveNumber: Check = (value) => (Number.isFinite(Number(value)) && Number(value) > 0 ? undefined : 'expected a positive number');
const nonNegativeNumber: Check = (value) => (value.trim() !== '' && Number.isFinite(Number(value)) && Number(value) >= 0 ? undefined : 'expected a number, 0 or more');

const BOOLEAN = /^(true|false|1|0|yes|no|on|off)$/i;
const boolean: Check = (value) => (BOOLEAN.test(value.trim()) ? undefined : 'expected true or false');

function oneOf(values: readonly string[]): Check {
  return (value) => (values.includes(value) ? undefined : `expected one of ${values.join(', ')}`);
}

const workerQueues: Check = (value) => {
  try {
    parseWorkerRoles(value, 'value');
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(/^value: /, '');
  }
};

const port = integer(0, 65535);
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export const SETTINGS = [
  // HTTP API
  { name: 'HOST', default: '127.0.0.1', meaning: 'HTTP listen address', readBy: ['start'] },
  { name: 'PORT', default: '9380', meaning: 'HTTP port (0 = any free port)', readBy: ['start'], check: port },
  { name: 'CAIRN_JSON_LIMIT', default: '1048576', meaning: 'largest JSON body in bytes', readBy: ['start'], check: integer(1) },
  { name: 'CAIRN_UPLOAD_LIMIT', default: '104857600', meaning: 'largest uploaded file in bytes', readBy: ['start'], check: integer(1) },
  { name: 'CAIRN_JWT_SECRET', default: 'unset', meaning: 'key that signs login tokens, at least 32 bytes, the same on every API replica', readBy: ['start'], shared: true },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'pino log level of the API and of cairn mcp', readBy: ['start', 'mcp'], check: oneOf(LOG_LEVELS) },

  // Where the state lives
  { name: 'CAIRN_DATA_DIR', default: './data', meaning: 'where the embedded databases, files and secrets live', readBy: SERVER },
  { name: 'CAIRN_DATABASE_URL', default: 'sqlite:<CAIRN_DATA_DIR>/cairn.db', meaning: 'metadata store: sqlite:<file> or postgres://user:pass@host:port/db', readBy: SERVER, shared: true },
  { name: 'CAIRN_INDEX', default: 'embedded', meaning: 'chunk and memory index: embedded (SQLite in the data dir) or milvus://host:port[/db]', readBy: SERVER, shared: true },
  { name: 'CAIRN_MILVUS_TOKEN', default: 'unset', meaning: 'Milvus credentials (user:password or an API key); only with CAIRN_INDEX=milvus://…', readBy: SERVER, shared: true },
  { name: 'CAIRN_BLOBS', default: '<CAIRN_DATA_DIR>/blobs', meaning: 'where files live: file:<dir> or s3://<bucket>[/<prefix>]', readBy: SERVER, shared: true },
  { name: 'CAIRN_S3_ENDPOINT', default: 'unset (AWS S3)', meaning: 'URL of an S3-compatible server', readBy: SERVER, shared: true },
  { name: 'CAIRN_S3_REGION', default: 'AWS_REGION, else us-east-1', meaning: 'region of the bucket', readBy: SERVER, shared: true },
  { name: 'CAIRN_S3_FORCE_PATH_STYLE', default: 'true with an endpoint, else false', meaning: 'address the bucket in the path instead of the host name', readBy: SERVER, shared: true, check: boolean },
  { name: 'AWS_REGION', default: 'unset', meaning: 'region of the bucket when CAIRN_S3_REGION is unset', readBy: SERVER, shared: true },
  { name: 'AWS_ACCESS_KEY_ID', default: 'unset', meaning: 'S3 access key; unset = the AWS SDK default chain', readBy: SERVER, shared: true },
  { name: 'AWS_SECRET_ACCESS_KEY', default: 'unset', meaning: 'S3 secret key', readBy: SERVER, shared: true },
  { name: 'AWS_SESSION_TOKEN', default: 'unset', meaning: 'S3 session token of temporary credentials', readBy: SERVER, shared: true },

  // Temporal and the workers
  { name: 'TEMPORAL_ADDRESS', default: 'unset', meaning: 'host:port of a Temporal server; unset = cairn start runs a dev server', readBy: SERVER, shared: true, requiredBy: ['worker'] },
  { name: 'TEMPORAL_NAMESPACE', default: 'default', meaning: 'Temporal namespace', readBy: SERVER, shared: true },
  { name: 'TEMPORAL_PORT', default: '7233', meaning: 'port of the child dev server', readBy: ['start'], check: port },
  { name: 'TEMPORAL_UI_PORT', default: '8233', meaning: 'Web UI port of the child dev server (0 = headless)', readBy: ['start'], check: port },
  { name: 'TEMPORAL_UI_URL', default: "the child dev server's UI", meaning: 'where operators open the Temporal Web UI', readBy: ['start'] },
  { name: 'TEMPORAL_BIN', default: '.venv/bin/temporal', meaning: 'the Temporal CLI that runs the dev server', readBy: ['start'] },
  { name: 'CAIRN_TASK_QUEUE', default: 'cairn', meaning: 'name of the main task queue; the others are derived from it', readBy: SERVER, shared: true },
  { name: 'CAIRN_EMBEDDED_WORKER', default: 'true', meaning: 'run the workers inside cairn start', readBy: ['start'], check: boolean },
  { name: 'CAIRN_WORKER_QUEUES', default: WORKER_ROLES.join(','), meaning: `the worker roles (task queues) a process polls: ${WORKER_ROLES.join(', ')}`, readBy: SERVER, workersOnly: true, check: workerQueues },

  // Parsing (in the workers)
  { name: 'CAIRN_PARSE_PROCESSES', default: 'half the CPUs (1 to 4)', meaning: 'parser child processes per worker process', readBy: SERVER, workersOnly: true, aliases: ['CAIRN_PARSE_THREADS'], check: positiveNumber },
  { name: 'CAIRN_PARSE_MEMORY_MB', default: '1024', meaning: 'memory ceiling of one parser process', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_TIMEOUT_SEC', default: '600', meaning: "time ceiling of one file's parse", readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_IDLE_SEC', default: '30', meaning: 'an idle parser process exits after this long', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_TEXT_MAX_MB', default: '50', meaning: 'largest text-like file that is parsed', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_ZIP_MAX_ENTRIES', default: '10000', meaning: 'most entries in a zip-based file', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_INFLATE_MAX_MB', default: '512', meaning: 'most bytes the compressed parts of one file may inflate to', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_INFLATE_ENTRY_MAX_MB', default: '256', meaning: 'most bytes one zip entry or PDF stream may inflate to', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_INFLATE_MAX_RATIO', default: '200', meaning: 'largest inflated/compressed ratio of a zip entry', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_IMAGE_MAX_MEGAPIXELS', default: '64', meaning: 'largest image that is decoded', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_PARSE_MAX_DEPTH', default: '256', meaning: 'deepest nesting of JSON values and PDF arrays/dictionaries', readBy: SERVER, workersOnly: true, check: positiveNumber },
  { name: 'CAIRN_ENRICH_CONCURRENCY', default: '4', meaning: 'chat-model calls one enrichment step (keywords and questions of a document) makes at once', readBy: SERVER, workersOnly: true, check: integer(1, 256) },

  // Capacity of the API
  { name: 'CAIRN_INDEX_THREADS', default: 'CPUs, at most 4', meaning: 'reader threads of the embedded chunk index (0 = on the event loop)', readBy: SERVER, check: integer(0) },
  { name: 'CAIRN_CACHE_SIGN_BITS_MB', default: '64', meaning: "bound of the embedded chunk index's in-memory sign bits, per index connection (API and each reader thread); least recently searched datasets are dropped first", readBy: SERVER, check: positiveNumber },
  { name: 'CAIRN_CACHE_FULLTEXT_MB', default: '128', meaning: "bound of the embedded chunk index's in-memory full-text copies (posting lists per dataset), per index connection (API and each reader thread); a dataset whose copy does not fit is searched with FTS5; 0 = always FTS5", readBy: SERVER, check: nonNegativeNumber },
  { name: 'CAIRN_CACHE_VECTORS_MB', default: '512', meaning: "bound of the embedded chunk index's in-memory vectors, one copy per dataset shared by the API's reader threads: float32 (exact cosines without SQLite) plus int8 (the vector leg's candidates), or int8 alone for a dataset whose float32 copy does not fit; either with 4-bit rows (a cheaper first pass) when it fits the bound with them; least recently searched datasets are dropped first; a dataset whose int8 copy does not fit either is served by sign bits and SQLite; 0 = always SQLite", readBy: SERVER, check: nonNegativeNumber },
  { name: 'CAIRN_CACHE_TERM_FREQUENCIES', default: '50000', meaning: 'words whose chunk frequencies the embedded chunk index keeps per connection (it starts over past this)', readBy: SERVER, check: integer(1) },
  { name: 'CAIRN_CACHE_MODEL_CLIENTS', default: '256', meaning: 'model clients (one per distinct provider configuration) kept; least recently used dropped first', readBy: SERVER, check: integer(1) },
  { name: 'CAIRN_MAX_INFLIGHT', default: '2 × CPUs', meaning: 'retrieval and search requests served at once', readBy: ['start'], check: integer(0) },
  { name: 'CAIRN_MAX_QUEUE', default: '8 × CPUs', meaning: 'retrieval and search requests that may wait for a place', readBy: ['start'], check: integer(0) },
  { name: 'CAIRN_MAX_QUEUE_WAIT_MS', default: '500', meaning: 'longest wait for a place before a 503 (0: no limit)', readBy: ['start'], check: integer(0) },
  { name: 'CAIRN_MAX_LONG_INFLIGHT', default: '16 × CPUs', meaning: 'long requests (completions, uploads) served at once', readBy: ['start'], check: integer(0) },
  { name: 'CAIRN_MAX_LONG_QUEUE', default: '4 × CPUs', meaning: 'long requests that may wait for a place', readBy: ['start'], check: integer(0) },
  { name: 'CAIRN_MAX_LONG_QUEUE_WAIT_MS', default: '5000', meaning: 'longest wait of a long request before a 503 (0: no limit)', readBy: ['start'], check: integer(0) },

  // Built-in models (queries are embedded by the API, chunks by the workers; both chat)
  { name: 'CAIRN_EMBED_THREADS', default: 'CPUs', meaning: 'ONNX Runtime threads of the built-in embedding model', readBy: SERVER, check: integer(1) },
  { name: 'CAIRN_EMBED_IDLE_SEC', default: '30', meaning: "the built-in embedding model's process ends after this many seconds unused, giving its memory back (the next request starts it again, ~1 s)", readBy: SERVER, check: positiveNumber },
  { name: 'CAIRN_EMBED_MODEL_DIR', default: 'models/ and .venv', meaning: 'folder with model.onnx and tokenizer.json of the built-in embedding models, or one subfolder per model named as its id (bge-small-en-v1.5, all-MiniLM-L6-v2)', readBy: SERVER },
  { name: 'CAIRN_CHAT_MODEL_FILE', default: 'found in .venv', meaning: 'the GGUF file of the built-in chat model', readBy: SERVER },
  { name: 'CAIRN_CHAT_CONTEXT', default: '4096', meaning: 'tokens of context per sequence of the built-in chat model', readBy: SERVER, check: integer(1) },
  { name: 'CAIRN_CHAT_PARALLEL', default: '2', meaning: 'requests the built-in chat model generates at once', readBy: SERVER, check: integer(1) },
  { name: 'CAIRN_CHAT_QUEUE', default: '32', meaning: 'requests that may wait for the built-in chat model', readBy: SERVER, check: integer(1) },
  { name: 'CAIRN_CHAT_THREADS', default: '1 on ≤ 2 CPUs, else CPUs/2 (at most 4)', meaning: 'llama.cpp threads of the built-in chat model', readBy: SERVER, check: integer(1) },

  // Agents' I/O (the MCP-server check runs in the API, the components in the workers)
  { name: 'CAIRN_ALLOW_PRIVATE_URLS', default: 'false', meaning: 'agents and MCP servers may reach private, loopback and link-local addresses', readBy: SERVER, check: boolean },
  { name: 'CAIRN_PRIVATE_URL_ALLOWLIST', default: 'empty', meaning: 'hosts and address ranges reachable although not public', readBy: SERVER },
  { name: 'CAIRN_SANDBOX_TIMEOUT', default: '60', meaning: 'seconds a CodeExec script may run', readBy: SERVER, workersOnly: true, check: integer(0) },
  { name: 'CAIRN_SANDBOX_MEMORY_MB', default: '256', meaning: 'memory of a CodeExec script', readBy: SERVER, workersOnly: true, check: integer(0) },
  { name: 'CAIRN_SANDBOX_WARM', default: 'true', meaning: 'keep one started Python sandbox ready after the first Python call', readBy: SERVER, workersOnly: true, check: boolean },

  // cairn mcp
  { name: 'CAIRN_API_KEY', default: 'unset', meaning: 'API key cairn mcp calls Cairn with (or --api-key)', readBy: ['mcp'] },
  { name: 'CAIRN_URL', default: 'http://127.0.0.1:9380', meaning: 'the Cairn cairn mcp calls', readBy: ['mcp'] },
] as const satisfies readonly Setting[];

export type SettingName = (typeof SETTINGS)[number]['name'] | 'CAIRN_PARSE_THREADS';

/** The environment as Cairn's modules may read it: only declared names type-check. */
export type SettingsEnv = Readonly<Partial<Record<SettingName, string>>>;

/** The process's environment, for code that reads a setting when it first needs it. */
export function configEnv(): SettingsEnv {
  return process.env;
}

const byName = new Map<string, Setting>();
for (const setting of SETTINGS as readonly Setting[]) {
  byName.set(setting.name, setting);
  for (const alias of setting.aliases ?? []) byName.set(alias, setting);
}

/** The declared setting of that name (or of an older name of it). */
export function settingNamed(name: string): Setting | undefined {
  return byName.get(name);
}

/** Every value in `env` that a declared check refuses, as `NAME="value": reason`. */
export function settingProblems(env: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const [name, setting] of byName) {
    const value = env[name];
    if (value === undefined || value.trim() === '' || !setting.check) continue;
    const problem = setting.check(value.trim());
    if (problem) problems.push(`${name}="${value}": ${problem}`);
  }
  return problems;
}

/** Throws one error naming every refused value (a value the code would otherwise ignore or misread). */
export function assertValidSettings(env: Readonly<Record<string, string | undefined>>): void {
  const problems = settingProblems(env);
  if (problems.length) throw new Error(`invalid configuration: ${problems.join('; ')}`);
}

/**
 * Variables that look like Cairn's (`CAIRN_…`) but are not declared: most likely a typo, read by
 * nothing. CAIRN_TEST_… belong to the test suite.
 */
export function unknownCairnVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env).filter((name) => name.startsWith('CAIRN_') && !name.startsWith('CAIRN_TEST_') && !byName.has(name));
}

/** true/false, 1/0, yes/no, on/off; unset or empty = `fallback` (other values are refused by assertValidSettings). */
export function booleanSetting(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value.trim() === '') return fallback;
  return /^(true|1|yes|on)$/i.test(value.trim());
}
