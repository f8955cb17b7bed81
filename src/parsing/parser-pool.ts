import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { moduleProcessArgs } from '../threads.js';
import { childEnv } from '../engine/orphaned-children.js';
import { dieWithParent } from '../engine/parent-death.js';
import { ParseLimitError } from './errors.js';
import type { ChunkRequest, EncodedChunks } from '../chunking/chunk-file.js';
import type { ExtractOptions } from './extractor.js';
import type { PageRange } from './checkpoint.js';
import { formatOf } from './formats.js';
import { refuseBeforeParsing } from './guards.js';
import { LIMIT_VARIABLES, type ParseLimits, type ParserCeilings } from './limits.js';
import { resolveFormat } from './sniff.js';
import { TenantTurns, type ReleaseTurn } from './tenant-turns.js';
import type { ExtractedDocument } from './types.js';

export interface ParserPoolOptions extends Omit<ParserCeilings, 'waitingFiles'> {
  limits: ParseLimits;
}

type Reply =
  | { type: 'ready' }
  | { id: number; type: 'progress'; fraction: number; message: string }
  | { id: number; type: 'checkpoint'; range: PageRange }
  | { id: number; type: 'done'; result: ExtractedDocument | EncodedChunks }
  | { id: number; type: 'error'; name: string; message: string };

interface Job {
  id: number;
  bytes: Uint8Array;
  filename: string;
  chunking?: ChunkRequest;
  options: ExtractOptions;
  resolve(result: ExtractedDocument | EncodedChunks): void;
  reject(err: unknown): void;
}

type KillReason = 'cancel' | 'memory' | 'timeout' | 'page' | 'retire' | 'stop' | 'startup' | 'broken';

interface Child {
  process: ChildProcess;
  ready: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
  /** Restarted with every progress message of a paged file (PDF, image): the time one page may take. */
  pageTimer?: NodeJS.Timeout;
  idleTimer?: NodeJS.Timeout;
  killedFor?: KillReason;
  /** The last lines the process wrote to stderr: how a V8 heap overflow is recognised. */
  stderr: string;
}

/** How often the memory of busy parser processes is read. A bomb inflates fast, so the check must be frequent. */
const WATCH_MS = 50;
/** A process still this full after its file is done is replaced rather than trusted with the next one. */
const RETIRE_FRACTION = 0.75;
/** A parser process that does not start within this time is given up (the job fails and is retried by its caller). */
const STARTUP_MS = 120_000;
const HEAP_OVERFLOW = /heap out of memory|Reached heap limit|allocation failed/i;
/**
 * Parsing is batch work: its processes run at a lower CPU priority so that, on a busy machine, the
 * scheduler serves the API and the worker's heartbeats first. Beside the embedding model, extraction then
 * takes ~1/3 core instead of 1/2 and fills part of the model's idle gaps (ingest throughput: no clear change,
 * bench/ingest/README.md, "Parser priority, and where the Cairn process's CPU goes").
 */
export const PARSER_NICENESS = 10;
/**
 * V8's young generation, per semi-space, in MB (Node's default grows to 16): parsing allocates many
 * short-lived objects, and a small nursery keeps less resident per process at the same CPU
 * (docs/operations.md, "Other choices, measured").
 */
const PARSER_SEMI_SPACE_MB = 2;

/** Resident memory of a process in MB, from /proc (Linux); undefined when it cannot be read. */
function residentMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const lastLine = (text: string): string =>
  text.trim().split('\n').filter((l) => l.trim() && !/^\s+at /.test(l)).pop()?.trim().slice(0, 300) ?? 'no output';

/**
 * Runs `extract` in a small pool of long-lived child processes, so that no file can hurt the process that
 * asked: each child has a V8 heap limit and a resident-memory watchdog (both at `memoryMb`), each file a
 * time ceiling (`timeoutSec`); a child over either is killed and the file fails with a ParseLimitError
 * naming the ceiling. Children are reused between files (starting one costs seconds) and replaced
 * when killed. Progress messages come back from the child; a cancel kills the child at once; errors keep
 * their name (UnsupportedFormatError, CorruptFileError, ParseLimitError); extra files wait in a queue.
 * Worker threads cannot do this: their resourceLimits do not count ArrayBuffers or native memory, and a
 * thread that runs out takes its whole process down (docs/parsing-limits.md).
 */
/** What the parse activities need of the parser processes (the port ActivityDeps carries). */
export type DocumentParsers = Pick<ParserPool, 'extract' | 'extractAndChunk' | 'admit'>;

/** Formats whose progress comes page by page (an image is one page): the page time limit applies to them. */
const PAGED_KINDS = new Set(['pdf', 'image']);

export class ParserPool {
  private readonly children: Child[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private watchdog?: NodeJS.Timeout;
  private readonly turns: TenantTurns;

  constructor(readonly options: ParserPoolOptions) {
    this.turns = new TenantTurns(options.processes);
  }

  /**
   * Waits for `tenant`'s turn at a parser process (round robin across tenants, docs/parsing-limits.md,
   * "Fair parsing"); the caller reads the file only once admitted and gives the turn back when done.
   */
  admit(tenant: string, signal?: AbortSignal): Promise<ReleaseTurn> {
    return this.turns.acquire(tenant, signal);
  }

  extract(bytes: Uint8Array, filename: string, options: ExtractOptions = {}): Promise<ExtractedDocument> {
    return this.run(bytes, filename, undefined, options) as Promise<ExtractedDocument>;
  }

  /**
   * Extracts the file and chunks it, both in a parser process: chunking a large document (token counts, seconds
   * for a book) then holds neither this process's event loop nor its memory, and falls under the same ceilings.
   * The chunks come back as their work file's text (EncodedChunks).
   */
  extractAndChunk(bytes: Uint8Array, filename: string, chunking: ChunkRequest, options: ExtractOptions = {}): Promise<EncodedChunks> {
    return this.run(bytes, filename, chunking, options) as Promise<EncodedChunks>;
  }

  private run(bytes: Uint8Array, filename: string, chunking: ChunkRequest | undefined, options: ExtractOptions): Promise<ExtractedDocument | EncodedChunks> {
    return new Promise((resolve, reject) => {
      if (options.signal?.aborted) return reject(options.signal.reason);
      try {
        // A 1 GB text file is refused here, before it is copied to a child.
        refuseBeforeParsing(bytes, filename, this.options.limits);
      } catch (error) {
        return reject(error);
      }
      const job: Job = { id: this.nextId++, bytes, filename, chunking, options, resolve, reject };
      options.signal?.addEventListener('abort', () => this.cancel(job), { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Pids and resident memory of the pool's processes (for tests and diagnostics). */
  processes(): { pid: number; busy: boolean; residentMb?: number }[] {
    return this.children.filter((c) => c.process.pid !== undefined).map((c) => ({ pid: c.process.pid!, busy: !!c.job, residentMb: residentMb(c.process.pid) }));
  }

  /** Kills every parser process; queued and running files are rejected. */
  async stop(): Promise<void> {
    for (const job of this.queue.splice(0)) job.reject(new Error(`parsing of ${job.filename} was stopped: the parser pool is shutting down`));
    const exits = this.children.map((c) => this.kill(c, 'stop'));
    await Promise.all(exits);
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let child = this.children.find((c) => !c.job && c.killedFor === undefined);
      if (!child && this.children.length < this.options.processes) child = this.spawn();
      if (!child) return;
      const job = this.queue.shift()!;
      child.job = job;
      this.hold(child, true);
      if (child.ready) this.send(child);
    }
  }

  private send(child: Child): void {
    const job = child.job!;
    child.stderr = '';
    child.timer = setTimeout(() => void this.kill(child, 'timeout'), this.options.timeoutSec * 1000);
    this.restartPageTimer(child);
    try {
      const resume = job.options.checkpoints?.done;
      child.process.send({ type: 'job', id: job.id, bytes: job.bytes, filename: job.filename, chunking: job.chunking, limits: this.options.limits, ...(resume?.length ? { resume } : {}) });
    } catch (error) {
      // The channel closed under us: the child is dying, and its exit fails the job.
      child.stderr = `could not send the file: ${(error as Error).message}`;
      void this.kill(child, 'broken');
      return;
    }
    this.watch();
  }

  private spawn(): Child {
    const args = [`--max-old-space-size=${this.options.memoryMb}`, `--max-semi-space-size=${PARSER_SEMI_SPACE_MB}`, ...moduleProcessArgs(new URL('./parser-process.ts', import.meta.url))];
    // Dies with Cairn even when busy in synchronous code; marked so a later start can find it if not.
    const launch = dieWithParent(undefined, process.execPath, args, 'SIGKILL');
    const proc = spawn(launch.command, launch.args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', env: childEnv() });
    const child: Child = { process: proc, ready: false, stderr: '' };
    this.children.push(child);
    if (proc.pid !== undefined) {
      try {
        setPriority(proc.pid, PARSER_NICENESS);
      } catch {
        // Not permitted on this system: the process runs at normal priority.
      }
    }
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (d: string) => {
      child.stderr = (child.stderr + d).slice(-8192);
    });
    (proc.stderr as { unref?: () => void } | null)?.unref?.();
    const startup = setTimeout(() => void this.kill(child, 'startup'), STARTUP_MS);
    startup.unref();
    proc.on('message', (msg: Reply) => {
      if (msg.type === 'ready') {
        clearTimeout(startup);
        child.ready = true;
        if (child.job && child.killedFor === undefined) this.send(child);
        else this.hold(child, false);
        return;
      }
      const job = child.job;
      if (!job || job.id !== msg.id) return;
      if (msg.type === 'progress') {
        this.restartPageTimer(child);
        return job.options.onProgress?.(msg.fraction, msg.message);
      }
      if (msg.type === 'checkpoint') return job.options.checkpoints?.save(msg.range);
      this.release(child);
      if (msg.type === 'done') job.resolve(msg.result);
      else job.reject(Object.assign(new Error(msg.message), { name: msg.name }));
    });
    let gone = false;
    const onGone = (code: number | null, signal: NodeJS.Signals | null) => {
      if (gone) return;
      gone = true;
      clearTimeout(startup);
      clearTimeout(child.timer);
      clearTimeout(child.pageTimer);
      clearTimeout(child.idleTimer);
      this.remove(child);
      const job = child.job;
      child.job = undefined;
      if (job && child.killedFor !== 'cancel') job.reject(this.failure(child, job, code, signal));
      this.dispatch();
    };
    proc.on('error', (err) => {
      child.stderr += `\n${err.message}`;
      // A process that could not be started never emits 'exit'.
      if (proc.pid === undefined) onGone(null, null);
      else if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    });
    proc.once('exit', onGone);
    return child;
  }

  /** Why a child died mid-file, as the error the file fails with. */
  private failure(child: Child, job: Job, code: number | null, signal: NodeJS.Signals | null): Error {
    const { memoryMb, timeoutSec } = this.options;
    if (child.killedFor === 'memory' || HEAP_OVERFLOW.test(child.stderr)) {
      return new ParseLimitError(job.filename, `exceeded the parser memory ceiling of ${memoryMb} MB (${LIMIT_VARIABLES.memoryMb})`);
    }
    if (child.killedFor === 'timeout') {
      return new ParseLimitError(job.filename, `took longer than ${timeoutSec} s to parse (limit ${timeoutSec} s, ${LIMIT_VARIABLES.timeoutSec})`);
    }
    if (child.killedFor === 'page') {
      const { pageTimeoutSec } = this.options;
      return new ParseLimitError(job.filename, `took longer than ${pageTimeoutSec} s on one page (limit ${pageTimeoutSec} s per page, ${LIMIT_VARIABLES.pageTimeoutSec})`);
    }
    if (child.killedFor === 'stop') return new Error(`parsing of ${job.filename} was stopped: the parser pool is shutting down`);
    if (child.killedFor === 'startup') return new Error(`the parser process for ${job.filename} did not start within ${STARTUP_MS / 1000} s`);
    return new Error(`the parser process for ${job.filename} ended unexpectedly (${signal ?? `exit code ${code}`}): ${lastLine(child.stderr)}`);
  }

  /**
   * The page clock of a paged file (PDF, image) starts again: the parser reports each page as it starts it, so
   * a process silent on one page for pageTimeoutSec is stuck on it (a hostile page, an undecodable picture).
   */
  private restartPageTimer(child: Child): void {
    clearTimeout(child.pageTimer);
    const job = child.job;
    const declared = job && formatOf(job.filename);
    if (!declared || !PAGED_KINDS.has(resolveFormat(declared, job.bytes))) return;
    child.pageTimer = setTimeout(() => void this.kill(child, 'page'), this.options.pageTimeoutSec * 1000);
  }

  /** Done with a file: the child takes the next one, unless its memory stayed high (then a fresh one will). */
  private release(child: Child): void {
    clearTimeout(child.timer);
    clearTimeout(child.pageTimer);
    child.job = undefined;
    const rss = residentMb(child.process.pid);
    if (rss !== undefined && rss > this.options.memoryMb * RETIRE_FRACTION) void this.kill(child, 'retire');
    else this.hold(child, false);
    this.dispatch();
  }

  /** A busy child keeps the process alive; an idle one does not, and exits after idleSec (its memory comes back). */
  private hold(child: Child, busy: boolean): void {
    const channel = child.process.channel as { ref?: () => void; unref?: () => void } | undefined;
    clearTimeout(child.idleTimer);
    child.idleTimer = undefined;
    if (!busy) {
      child.idleTimer = setTimeout(() => {
        if (!child.job) void this.kill(child, 'retire');
      }, this.options.idleSec * 1000);
      child.idleTimer.unref();
    }
    if (busy) {
      child.process.ref();
      channel?.ref?.();
    } else {
      child.process.unref();
      channel?.unref?.();
    }
  }

  private kill(child: Child, reason: KillReason): Promise<void> {
    const proc = child.process;
    child.killedFor ??= reason;
    if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.ref(); // whoever awaits the exit keeps this process alive until it comes
    proc.kill('SIGKILL');
    return exited;
  }

  private remove(child: Child): void {
    const i = this.children.indexOf(child);
    if (i >= 0) this.children.splice(i, 1);
  }

  private cancel(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) this.queue.splice(queued, 1);
    const child = this.children.find((c) => c.job === job);
    // The only way to stop a parser mid-file: end its process; dispatch() starts a fresh one when needed.
    if (child) void this.kill(child, 'cancel');
    job.reject(job.options.signal!.reason);
  }

  /** Reads the memory of busy children every WATCH_MS while any is busy; one over the ceiling is killed. */
  private watch(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => {
      const busy = this.children.filter((c) => c.job && c.ready && c.killedFor === undefined);
      if (busy.length === 0) {
        clearInterval(this.watchdog);
        this.watchdog = undefined;
        return;
      }
      for (const child of busy) {
        const rss = residentMb(child.process.pid);
        if (rss !== undefined && rss > this.options.memoryMb) void this.kill(child, 'memory');
      }
    }, WATCH_MS);
    this.watchdog.unref();
  }
}
