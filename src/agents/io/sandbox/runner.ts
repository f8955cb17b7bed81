import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Runs one CodeExec job in a fresh child process (child.mjs) and enforces its limits from outside:
 * a kill timer, Node's heap limit, a cap on Pyodide's WebAssembly memory, and a watchdog on the
 * child's resident memory (ArrayBuffers and wasm memory are outside V8's heap limit). A child
 * serves exactly one job and is killed after it, so nothing a script does outlives its call.
 */

export type SandboxLang = 'javascript' | 'python';

export interface SandboxLimits {
  /** Wall-clock time the script may run, from the moment the job reaches a ready runtime. */
  timeoutMs: number;
  /** JavaScript: the V8 heap; Python: the interpreter's WebAssembly memory. The process as a whole gets a fixed allowance on top. */
  memoryMb: number;
  /** Python: after the call, start the next runtime and keep it ready (CAIRN_SANDBOX_WARM); default true. */
  keepWarm?: boolean;
}

export interface SandboxJob {
  lang: SandboxLang;
  script: string;
  argsJson: string;
}

export type SandboxReply =
  | { ok: true; json: string; stdout: string }
  | { ok: false; error: { name: string; message: string; detail?: string }; stdout: string };

export type SandboxFailureKind = 'timeout' | 'memory' | 'unavailable' | 'crashed';

/** The sandbox stopped the script (time, memory), or could not run it. The message is meant for the user. */
export class SandboxFailure extends Error {
  constructor(
    readonly kind: SandboxFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxFailure';
  }
}

/** Largest captured console output, and largest JSON result, a child may send back. */
const MAX_OUTPUT = 256 * 1024;
const MAX_RESULT = 16 * 1024 * 1024;
/** Memory a child may use beyond `memoryMb` before the watchdog kills it: Node itself, and Pyodide's runtime. */
const RSS_ALLOWANCE_MB: Record<SandboxLang, number> = { javascript: 128, python: 320 };
/** Room for Pyodide's own start-up state in its linear memory; the script gets `memoryMb` on top. */
const PY_BASE_WASM_MB = 48;
/** V8 heap of a Python child: Pyodide's JavaScript side only. */
const PY_JS_HEAP_MB = 256;
/** Time to start a runtime (Pyodide starts from its memory snapshot; making the snapshot, once, takes longer). */
const STARTUP_MS: Record<SandboxLang, number> = { javascript: 20_000, python: 120_000 };
const WATCH_MS = 20;
const SPARE_IDLE_MS = 10 * 60_000;
const MAX_CONCURRENT = Math.max(2, availableParallelism());

const CHILD_ENTRY = fileURLToPath(new URL('./child.mjs', import.meta.url));

// ---------------------------------------------------------------------------------------------------
// How a child is started.

interface Launcher {
  /** Program and leading arguments that wrap `node` (unshare / setpriv), or none. */
  prefix: string[];
  /** What isolates the child beyond Node's permission model, for the record. */
  isolation: string[];
}

let launcher: Launcher | undefined;

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const file = join(dir, name);
    if (dir && existsSync(file)) return file;
  }
  return undefined;
}

/**
 * Wraps the child, where the system allows, in an empty network namespace (`unshare --net`, as an
 * unprivileged user namespace) and in `setpriv --pdeathsig KILL --no-new-privs`, so a child dies with
 * its parent. Each is checked once; without them the child still runs with the network removed from
 * its JavaScript runtime (child.mjs), only without that second wall.
 */
function getLauncher(): Launcher {
  if (launcher) return launcher;
  const works = (cmd: string[]) => spawnSync(cmd[0]!, [...cmd.slice(1), process.execPath, '-e', '0'], { stdio: 'ignore', timeout: 10_000, env: {} }).status === 0;
  const unshare = process.platform === 'linux' ? findOnPath('unshare') : undefined;
  const setpriv = process.platform === 'linux' ? findOnPath('setpriv') : undefined;
  const priv = setpriv ? [setpriv, '--pdeathsig', 'KILL', '--no-new-privs'] : [];
  const candidates: Launcher[] = [];
  if (unshare) candidates.push({ prefix: [unshare, '--net', '--map-root-user', ...priv], isolation: ['network namespace', ...(setpriv ? ['pdeathsig', 'no-new-privs'] : [])] });
  if (unshare && process.getuid?.() === 0) candidates.push({ prefix: [unshare, '--net', ...priv], isolation: ['network namespace', ...(setpriv ? ['pdeathsig', 'no-new-privs'] : [])] });
  if (setpriv) candidates.push({ prefix: priv, isolation: ['pdeathsig', 'no-new-privs'] });
  launcher = candidates.find((c) => works(c.prefix)) ?? { prefix: [], isolation: [] };
  return launcher;
}

const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

function allowRead(path: string, dir = false): string {
  // Node 20-22 grant a folder with a trailing wildcard; later versions take the folder itself.
  return `--allow-fs-read=${dir && NODE_MAJOR < 23 ? join(path, '*') : path}`;
}

interface ChildConfig {
  lang: SandboxLang;
  pyodideDir?: string;
  snapshot?: string;
  makeSnapshot?: string;
  wasmMaxMb?: number;
  maxOutput: number;
  maxResult: number;
}

function startChild(config: ChildConfig, heapMb: number, extraFlags: string[] = []): ChildProcess {
  const flags = [
    '--no-warnings',
    PERMISSION_FLAG,
    allowRead(CHILD_ENTRY),
    ...(config.pyodideDir ? [allowRead(config.pyodideDir, true)] : []),
    ...(config.snapshot ? [allowRead(config.snapshot)] : []),
    ...extraFlags,
    '--disallow-code-generation-from-strings',
    `--max-old-space-size=${heapMb}`,
    CHILD_ENTRY,
    JSON.stringify(config),
  ];
  const { prefix } = getLauncher();
  const [file, ...args] = prefix.length ? [...prefix, process.execPath, ...flags] : [process.execPath, ...flags];
  return spawn(file!, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: {}, cwd: tmpdir(), serialization: 'json' });
}

// ---------------------------------------------------------------------------------------------------
// Pyodide: where it is, and a memory snapshot of a started interpreter (a start from it skips Pyodide's own start-up).

interface PyodideInfo {
  dir: string;
  version: string;
}

let pyodide: PyodideInfo | null | undefined;
let pyodideMissing = '';

export function pyodideInfo(): PyodideInfo | null {
  if (pyodide !== undefined) return pyodide;
  try {
    const pkg = createRequire(import.meta.url).resolve('pyodide/package.json');
    const dir = dirname(pkg);
    const version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
    for (const f of ['pyodide.js', 'pyodide.asm.wasm', 'python_stdlib.zip']) if (!existsSync(join(dir, f))) throw new Error(`${f} is missing from ${dir}`);
    pyodide = { dir, version };
  } catch (err) {
    pyodideMissing = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    pyodide = null;
  }
  return pyodide;
}

let snapshot: Promise<string | undefined> | undefined;

/** The snapshot file, made once per Pyodide version in a private folder; undefined if it cannot be made. */
function pyodideSnapshot(info: PyodideInfo): Promise<string | undefined> {
  snapshot ??= (async () => {
    const dir = join(tmpdir(), `cairn-sandbox-${process.getuid?.() ?? 'user'}`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const st = statSync(dir);
      if ((process.getuid && st.uid !== process.getuid()) || (st.mode & 0o077) !== 0) return undefined;
    } catch {
      return undefined;
    }
    const file = join(dir, `pyodide-${info.version}.snapshot`);
    if (existsSync(file)) return file;
    const partial = `${file}.${process.pid}.${Date.now()}.tmp`;
    const child = startChild({ lang: 'python', pyodideDir: info.dir, makeSnapshot: partial, maxOutput: MAX_OUTPUT, maxResult: MAX_RESULT }, PY_JS_HEAP_MB, [`--allow-fs-write=${partial}`]);
    const made = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), STARTUP_MS.python);
      child.stderr?.resume();
      child.on('message', (m: { type?: string }) => m?.type === 'snapshot' && resolve(true));
      child.on('exit', () => (clearTimeout(timer), resolve(false)));
      child.on('error', () => (clearTimeout(timer), resolve(false)));
    });
    await new Promise((r) => (child.exitCode === null && child.signalCode === null ? child.once('exit', r) : r(null)));
    try {
      if (made && existsSync(partial)) {
        renameSync(partial, file);
        return file;
      }
    } catch {
      /* fall through */
    }
    rmSync(partial, { force: true });
    return undefined;
  })();
  return snapshot;
}

/** A snapshot that failed to start is not used again in this process (it is remade next time). */
function dropSnapshot(file: string): void {
  rmSync(file, { force: true });
  snapshot = Promise.resolve(undefined);
}

// ---------------------------------------------------------------------------------------------------
// One child, from start to its single job.

interface Prepared {
  child: ChildProcess;
  lang: SandboxLang;
  memoryMb: number;
  /** Resolves when the runtime is loaded; rejects if the child died first. */
  ready: Promise<void>;
  stderr: () => string;
  /** Set by the watchdog when the child went over its memory. */
  overMemory: boolean;
  watchdog?: NodeJS.Timeout;
  snapshot?: string;
}

function prepare(lang: SandboxLang, memoryMb: number, snapshotFile?: string): Prepared {
  const info = lang === 'python' ? pyodideInfo() : null;
  const config: ChildConfig =
    lang === 'python'
      ? { lang, pyodideDir: info!.dir, snapshot: snapshotFile, wasmMaxMb: memoryMb + PY_BASE_WASM_MB, maxOutput: MAX_OUTPUT, maxResult: MAX_RESULT }
      : { lang, maxOutput: MAX_OUTPUT, maxResult: MAX_RESULT };
  const child = startChild(config, lang === 'python' ? PY_JS_HEAP_MB : memoryMb);
  let err = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    err = (err + d).slice(-8192);
  });
  const prepared: Prepared = { child, lang, memoryMb, ready: Promise.resolve(), stderr: () => err, overMemory: false, snapshot: snapshotFile };
  prepared.ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new SandboxFailure('unavailable', `CodeExec: the ${lang} sandbox did not start within ${STARTUP_MS[lang] / 1000} s`));
    }, STARTUP_MS[lang]);
    timer.unref();
    const onMessage = (m: { type?: string }) => {
      if (m?.type !== 'ready') return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve();
    };
    child.on('message', onMessage);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new SandboxFailure('unavailable', `CodeExec: the ${lang} sandbox failed to start (${sig ?? `exit code ${code}`}): ${lastLine(err)}`));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new SandboxFailure('unavailable', `CodeExec: the ${lang} sandbox could not be started: ${e.message}`));
    });
  });
  prepared.ready.catch(() => undefined);
  const limitMb = memoryMb + RSS_ALLOWANCE_MB[lang];
  if (process.platform === 'linux' && child.pid) {
    const statusFile = `/proc/${child.pid}/status`;
    prepared.watchdog = setInterval(() => {
      let rssMb = 0;
      try {
        const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(statusFile, 'utf8'));
        rssMb = m ? Number(m[1]) / 1024 : 0;
      } catch {
        return;
      }
      if (rssMb > limitMb) {
        prepared.overMemory = true;
        child.kill('SIGKILL');
      }
    }, WATCH_MS);
    prepared.watchdog.unref();
  }
  child.once('exit', () => clearInterval(prepared.watchdog));
  return prepared;
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n').filter((l) => l.trim() && !/^\s+at /.test(l));
  return (lines.find((l) => /Error|FATAL|denied|restricted/i.test(l)) ?? lines[lines.length - 1] ?? 'no output').trim().slice(0, 300);
}

function runJob(p: Prepared, job: SandboxJob, limits: SandboxLimits, signal: AbortSignal): Promise<SandboxReply> {
  const { child } = p;
  return new Promise<SandboxReply>((resolve, reject) => {
    let timedOut = false;
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      fn();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limits.timeoutMs);
    const onAbort = () => finish(() => reject(signal.reason ?? new Error('aborted')));
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('message', (m: { type?: string } & Partial<SandboxReply>) => {
      if (m?.type !== 'done') return;
      finish(() => resolve(replyOf(m)));
    });
    child.once('exit', (code, sig) => {
      finish(() => {
        const limitText = `${limits.memoryMb} MB`;
        if (timedOut) return reject(new SandboxFailure('timeout', `CodeExec: the script ran longer than ${seconds(limits.timeoutMs)} and was stopped`));
        const err = p.stderr();
        if (p.overMemory || /heap out of memory|Reached heap limit|allocation failed/i.test(err)) {
          return reject(new SandboxFailure('memory', `CodeExec: the script used more than ${limitText} of memory and was stopped`));
        }
        if (/ERR_ACCESS_DENIED|Access to this API has been restricted/.test(err)) {
          return reject(new SandboxFailure('crashed', `CodeExec: the script tried to use the file system, a process or another resource the sandbox refuses (${lastLine(err)})`));
        }
        reject(new SandboxFailure('crashed', `CodeExec: the sandbox process ended unexpectedly (${sig ?? `exit code ${code}`}): ${lastLine(err)}`));
      });
    });
    child.send({ type: 'job', script: job.script, argsJson: job.argsJson, timeoutMs: limits.timeoutMs });
  });
}

function replyOf(m: Partial<SandboxReply>): SandboxReply {
  const stdout = typeof m.stdout === 'string' ? m.stdout.slice(0, MAX_OUTPUT) : '';
  if (m.ok === true && typeof m.json === 'string') return { ok: true, json: m.json, stdout };
  const e = (m as { error?: { name?: unknown; message?: unknown; detail?: unknown } }).error ?? {};
  return { ok: false, error: { name: String(e.name ?? 'Error'), message: String(e.message ?? ''), detail: e.detail ? String(e.detail) : undefined }, stdout };
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

// ---------------------------------------------------------------------------------------------------
// Concurrency, and one warm Python runtime kept ready for the next call.

let running = 0;
const waiting: (() => void)[] = [];

async function acquire(signal: AbortSignal): Promise<void> {
  if (running < MAX_CONCURRENT) {
    running++;
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const go = () => {
      signal.removeEventListener('abort', onAbort);
      running++;
      resolve();
    };
    const onAbort = () => {
      const i = waiting.indexOf(go);
      if (i >= 0) waiting.splice(i, 1);
      reject(signal.reason ?? new Error('aborted'));
    };
    waiting.push(go);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function release(): void {
  running--;
  waiting.shift()?.();
}

interface Spare {
  prepared: Prepared;
  idle: NodeJS.Timeout;
}
let spare: Spare | undefined;

function takeSpare(memoryMb: number): Prepared | undefined {
  const s = spare;
  if (!s || s.prepared.memoryMb !== memoryMb || s.prepared.child.exitCode !== null || s.prepared.child.signalCode !== null) return undefined;
  spare = undefined;
  clearTimeout(s.idle);
  return s.prepared;
}

function keepSpare(memoryMb: number, snapshotFile: string | undefined): void {
  if (spare) return;
  const prepared = prepare('python', memoryMb, snapshotFile);
  // An idle spare never keeps the process alive: neither the child, nor its IPC channel, nor its stderr pipe.
  setHandlesRef(prepared.child, false);
  const idle = setTimeout(() => {
    if (spare?.prepared === prepared) spare = undefined;
    prepared.child.kill('SIGKILL');
  }, SPARE_IDLE_MS);
  idle.unref();
  spare = { prepared, idle };
  prepared.ready.catch(() => {
    if (spare?.prepared === prepared) spare = undefined;
  });
  prepared.child.once('exit', () => {
    if (spare?.prepared === prepared) spare = undefined;
  });
}

function setHandlesRef(child: ChildProcess, on: boolean): void {
  const method = on ? 'ref' : 'unref';
  child[method]();
  for (const handle of [child.channel, child.stderr] as unknown as ({ ref?: () => void; unref?: () => void } | null | undefined)[]) handle?.[method]?.();
}

/** Stops the warm Python runtime (tests, shutdown); the next Python call with keepWarm starts another. */
export function stopSandboxSpares(): void {
  const s = spare;
  spare = undefined;
  if (s) {
    clearTimeout(s.idle);
    s.prepared.child.kill('SIGKILL');
  }
}

process.once('exit', () => spare?.prepared.child.kill('SIGKILL'));

/** Why Python cannot run here, or '' when it can. */
export function pythonUnavailable(): string {
  return pyodideInfo() ? '' : `Python sandbox not available: the pyodide package cannot be loaded (${pyodideMissing}); run npm install`;
}

/** What isolates the children on this machine (for logs and the operator). */
export function sandboxIsolation(): string[] {
  return ['child process per call', 'Node permission model', 'no code generation from strings', 'heap limit', 'RSS watchdog', ...getLauncher().isolation];
}

/** Runs one job in its own child process; resolves with the script's reply, rejects with SandboxFailure. */
export async function runInSandbox(job: SandboxJob, limits: SandboxLimits, signal: AbortSignal): Promise<SandboxReply> {
  signal.throwIfAborted();
  if (job.lang === 'python' && !pyodideInfo()) throw new SandboxFailure('unavailable', pythonUnavailable());
  await acquire(signal);
  try {
    if (job.lang === 'javascript') {
      const p = prepare('javascript', limits.memoryMb);
      return await runPrepared(p, job, limits, signal);
    }
    const file = await pyodideSnapshot(pyodideInfo()!);
    signal.throwIfAborted();
    let p = takeSpare(limits.memoryMb) ?? prepare('python', limits.memoryMb, file);
    try {
      return await runPrepared(p, job, limits, signal);
    } catch (err) {
      // A runtime that could not start from the snapshot: drop the snapshot, start once without it.
      if (!(err instanceof SandboxFailure && err.kind === 'unavailable' && p.snapshot)) throw err;
      dropSnapshot(p.snapshot);
      p = prepare('python', limits.memoryMb);
      return await runPrepared(p, job, limits, signal);
    } finally {
      if (limits.keepWarm ?? true) keepSpare(limits.memoryMb, await snapshot);
    }
  } finally {
    release();
  }
}

async function runPrepared(p: Prepared, job: SandboxJob, limits: SandboxLimits, signal: AbortSignal): Promise<SandboxReply> {
  setHandlesRef(p.child, true);
  const onAbort = () => p.child.kill('SIGKILL');
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await p.ready;
  } catch (err) {
    signal.throwIfAborted();
    if (p.overMemory) throw new SandboxFailure('memory', `CodeExec: the ${p.lang} sandbox needs more memory than ${limits.memoryMb} MB to start`);
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  signal.throwIfAborted();
  return runJob(p, job, limits, signal);
}
