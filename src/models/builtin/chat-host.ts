import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../threads.js';
import { ModelError, type TokenUsage } from '../types.js';
import { configKey, initialStatus, type ChatEngineConfig, type ChatEngineStatus, type FromWorker, type GenerateRequest, type ToWorker } from './chat-protocol.js';
import { BUILTIN_FACTORY } from './spec.js';

/*
 * One chat worker per process, started by the first generation and kept for the process's life:
 * node-llama-cpp's native binding aborts the process when its thread is terminated while loaded, so
 * the worker is never terminated; before a natural exit (`beforeExit`) it is asked to free llama.cpp
 * first. It is unref'd while idle so it never keeps the process alive.
 */

export interface GenerationEvents {
  chunk(kind: 'answer' | 'reasoning', text: string): void;
  done(text: string, usage: TokenUsage): void;
  error(err: ModelError): void;
}

let worker: Worker | undefined;
const pending = new Map<number, GenerationEvents>();
const statuses = new Map<string, ChatEngineStatus>();
let nextId = 1;
let exitHook = false;
/** A generation ran since the last dispose: llama.cpp may be loaded. */
let used = false;
let disposing: Promise<void> | undefined;
let onDisposed: (() => void) | undefined;

function post(target: Worker, msg: ToWorker): void {
  target.postMessage(msg);
}

function failAll(dead: Worker, message: string): void {
  if (worker !== dead) return;
  worker = undefined;
  for (const events of pending.values()) events.error(new ModelError(`${BUILTIN_FACTORY}: ${message}`, BUILTIN_FACTORY, 500));
  pending.clear();
  for (const [key, status] of statuses) statuses.set(key, { ...status, state: 'failed', memory_bytes: 0, active: 0, queued: 0, error: message });
}

function onMessage(started: Worker, msg: FromWorker): void {
  if (msg.type === 'status') {
    statuses.set(msg.key, msg.status);
    return;
  }
  if (msg.type === 'disposed') {
    onDisposed?.();
    return;
  }
  const events = pending.get(msg.id);
  if (!events) return;
  if (msg.type === 'chunk') {
    events.chunk(msg.kind, msg.text);
    return;
  }
  pending.delete(msg.id);
  if (pending.size === 0) started.unref();
  if (msg.type === 'done') events.done(msg.text, msg.usage);
  else events.error(new ModelError(msg.message, BUILTIN_FACTORY, msg.status));
}

function ensureWorker(): Worker {
  if (worker) return worker;
  const started = startModuleWorker(new URL('./chat-worker.ts', import.meta.url));
  started.unref();
  started.on('message', (msg: FromWorker) => onMessage(started, msg));
  started.on('error', (err) => failAll(started, `the chat worker crashed: ${err.message}`));
  started.on('exit', (code) => failAll(started, `the chat worker exited (code ${code})`));
  worker = started;
  if (!exitHook) {
    exitHook = true;
    process.on('beforeExit', () => {
      if (used) void disposeChatWorker();
    });
  }
  return started;
}

/**
 * Starts a generation in the chat worker; `events` receive its chunks and its end. Returns a function
 * that cancels it (a no-op once it has ended): the worker stops generating at the next token.
 */
export function generateInWorker(config: ChatEngineConfig, request: GenerateRequest, events: GenerationEvents): () => void {
  const target = ensureWorker();
  const id = nextId++;
  pending.set(id, events);
  used = true;
  target.ref();
  post(target, { type: 'generate', id, config, request });
  return () => {
    if (!pending.delete(id)) return;
    if (pending.size === 0) target.unref();
    post(target, { type: 'cancel', id });
  };
}

/** The last status the worker reported for this configuration (not loaded when it never ran). */
export function chatWorkerStatus(config: ChatEngineConfig): ChatEngineStatus {
  return statuses.get(configKey(config)) ?? initialStatus(config);
}

/** Frees llama.cpp in the worker (models and contexts); a later generation loads them again. */
export function disposeChatWorker(): Promise<void> {
  const target = worker;
  if (!target || disposing) return disposing ?? Promise.resolve();
  disposing = new Promise<void>((resolve) => {
    onDisposed = () => {
      onDisposed = undefined;
      disposing = undefined;
      if (pending.size === 0) target.unref();
      resolve();
    };
    used = false;
    target.ref();
    post(target, { type: 'dispose' });
  });
  return disposing;
}
