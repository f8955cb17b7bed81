import { spawn, type ChildProcess } from 'node:child_process';
import { configEnv } from '../../config-schema.js';
import { fullGc } from '../../full-gc.js';
import { moduleProcessArgs } from '../../threads.js';
import { childEnv } from '../../engine/orphaned-children.js';
import { dieWithParent } from '../../engine/parent-death.js';
import type { EmbedReply, EmbedRequest, EncoderConfig } from './embedding-process.js';

/*
 * The built-in embedding model runs in one child process per Cairn process (embedding-process.ts),
 * started on first use and ended once it has been idle for the configured period: its V8 heap, ONNX
 * session and, above all, the memory glibc keeps in the arenas of the threads that ran the model
 * (which a released session does not give back) all return to the system. The next request starts it
 * again (docs/operations.md, "Memory"). Inference off the
 * API's process also keeps its event loop free. The process never keeps Cairn alive while idle.
 */

interface Pending {
  resolve: (vectors: Float32Array) => void;
  reject: (err: Error) => void;
}

/** A running embedding process and the requests it has been sent. */
class EmbeddingProcess {
  readonly child: ChildProcess;
  readonly pending = new Map<number, Pending>();
  /** Requests written before the process said it was ready. */
  private readonly unsent: EmbedRequest[] = [];
  private ready = false;
  private idleTimer?: NodeJS.Timeout;
  private stderr = '';
  exited = false;

  constructor(private readonly onGone: (proc: EmbeddingProcess) => void) {
    const args = [`--max-semi-space-size=${EMBEDDING_SEMI_SPACE_MB}`, ...moduleProcessArgs(new URL('./embedding-process.ts', import.meta.url))];
    // Dies with Cairn even in the middle of a batch (parent-death.ts); marked for the next start otherwise.
    const launch = dieWithParent(undefined, process.execPath, args, 'SIGKILL');
    this.child = spawn(launch.command, launch.args, {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
      env: childEnv(embeddingProcessEnv(configEnv())),
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4096);
    });
    (this.child.stderr as { unref?: () => void } | null)?.unref?.();
    this.child.on('message', (msg: EmbedReply) => this.receive(msg));
    this.child.on('error', (err) => this.gone(`the embedding process failed: ${err.message}`));
    this.child.on('exit', (code, signal) => this.gone(`the embedding process exited (${signal ?? `exit code ${code}`})`));
    this.hold(false);
  }

  send(request: EmbedRequest, call: Pending): void {
    this.pending.set(request.id, call);
    this.hold(true);
    if (this.ready) this.write(request);
    else this.unsent.push(request);
  }

  /** Ends the process; requests still waiting fail. */
  stop(): void {
    if (this.exited) return;
    this.child.kill('SIGKILL');
  }

  private receive(msg: EmbedReply): void {
    if ('type' in msg) {
      this.ready = true;
      for (const request of this.unsent.splice(0)) this.write(request);
      return;
    }
    const call = this.pending.get(msg.id);
    if (!call) return;
    this.pending.delete(msg.id);
    if (msg.ok) call.resolve(msg.vectors);
    else call.reject(new Error(msg.message));
    if (this.pending.size === 0) this.hold(false);
  }

  private write(request: EmbedRequest): void {
    try {
      this.child.send(request);
    } catch (err) {
      // The channel closed under us: the process is going, and its exit fails what it held.
      this.stderr += `\ncould not send a request: ${(err as Error).message}`;
      this.stop();
    }
  }

  /** Busy: keeps Cairn alive and the process running. Idle: neither, and the process ends after its idle period. */
  private hold(busy: boolean): void {
    clearTimeout(this.idleTimer);
    const channel = this.child.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    if (busy) {
      this.child.ref();
      channel?.ref?.();
      return;
    }
    this.child.unref();
    channel?.unref?.();
    this.idleTimer = setTimeout(() => {
      if (this.pending.size === 0) this.retire();
    }, idleSec * 1000);
    this.idleTimer.unref();
  }

  private retire(): void {
    this.onGone(this);
    this.stop();
    // Nothing was embedded for idleSec: the work that needed it (a parse run, queries) is over, and
    // this is the moment to hand back what this process's heap grew meanwhile (one short pause).
    fullGc();
  }

  private gone(reason: string): void {
    if (this.exited) return;
    this.exited = true;
    clearTimeout(this.idleTimer);
    this.onGone(this);
    const detail = this.stderr.trim().split('\n').filter((l) => l.trim() && !/^\s+at /.test(l)).pop();
    const error = new Error(detail ? `${reason}: ${detail.slice(0, 300)}` : reason);
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}

/**
 * V8's young generation, per semi-space, in MB (Node's default grows to 16): each request and reply is
 * deserialized into short-lived objects. Measured by bench/ingest/embedding-memory.ts (16 callers, requests of 32 texts):
 * the process's RSS p90 317–318 instead of 339–380 MB, at 19.9–20.0 instead of 19.5–20.0 CPU-ms per text. Its
 * peak did not move (a spike of glibc's heap during a model run; docs/operations.md, "Memory").
 */
export const EMBEDDING_SEMI_SPACE_MB = 2;

/**
 * glibc's mmap threshold in the embedding process, in bytes: blocks this large or larger (a model run's
 * largest tensors) are mapped for the run and unmapped after it. glibc's default threshold rises to the
 * largest block freed (up to 32 MB), after which they come from its heap, which a run's spike grows and keeps
 * (docs/operations.md, "Memory"): under ingest-shaped load (bench/ingest/embedding-memory.ts) the process peaked at
 * 278–305 MB with it, 333–403 without (277–296 against 359–431 in bench/ingest/run.ts's 100 documents). Not lower: 1 MB cost ~15% more CPU per text, and
 * Cairn's own 128 KB (`make run`) maps every tensor afresh, ~25% more.
 */
export const EMBEDDING_MMAP_THRESHOLD = 4 * 2 ** 20;

/** The embedding process's environment: Cairn's, with the embedding process's own mmap threshold. */
export function embeddingProcessEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, MALLOC_MMAP_THRESHOLD_: String(EMBEDDING_MMAP_THRESHOLD) };
}

let current: EmbeddingProcess | undefined;
let nextId = 1;
/** Seconds an idle process is kept; the latest request's configuration sets it. */
let idleSec = 30;

function running(): EmbeddingProcess {
  current ??= new EmbeddingProcess((proc) => {
    if (current === proc) current = undefined;
  });
  return current;
}

/** Whether the embedding process is running (and its pid), and how many requests it has been sent and not yet answered. */
export function embeddingProcessStatus(): { running: boolean; pending: number; pid?: number } {
  return { running: current !== undefined, pending: current?.pending.size ?? 0, pid: current?.child.pid };
}

/** Embeds texts with the given encoder configuration in the embedding process; texts.length * dims floats. */
export function embedInProcess(config: EncoderConfig, texts: string[]): Promise<Float32Array> {
  idleSec = config.idleSec;
  const request: EmbedRequest = { id: nextId++, config, texts };
  return new Promise((resolve, reject) => running().send(request, { resolve, reject }));
}
