/**
 * Admission control for heavy routes. Each lane lets a bounded number of requests run at once and a
 * bounded number wait (first come, first served) for a place, for a bounded time; a request beyond the
 * queue is answered at once, and one that waited too long then, with 503, a Retry-After header and the
 * error envelope, instead of joining a queue that only grows while every answer gets slower. The time
 * bound keeps accepted requests fast when the machine is slower than the counts assume (other load, a
 * larger index). Light routes (health, lists, metrics) belong to no lane and are never refused.
 *
 * Two lanes, because their requests hold a place for very different times:
 * - short: retrieval and search, CPU-bound work of tens of milliseconds;
 * - long: model answers streamed for seconds (chat and agent completions) and uploads, which mostly wait
 *   on a model or the network: bounding them with the short lane would let a few streams lock out search.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { LaneLimits } from '../config.js';
import { sendError } from './envelope.js';
import type { RouteSpec } from './routes.js';

export type Lane = NonNullable<RouteSpec['admission']>;

type Release = () => void;
type Entry = { admitted: true; release: Release } | { admitted: false; retryAfterSeconds: number; message: string };

/** How much of the mean hold time a new observation moves it. */
const HOLD_SMOOTHING = 0.2;
const MAX_RETRY_AFTER_SECONDS = 60;

export interface GateState {
  in_flight: number;
  queued: number;
  max_in_flight: number;
  max_queue: number;
  admitted: number;
  rejected: number;
}

export class AdmissionGate {
  private inFlight = 0;
  private readonly waiting: ((entry: Entry) => void)[] = [];
  private meanHoldMs = 0;
  private admitted = 0;
  private rejected = 0;

  /** `what` names the lane's requests in busy messages, `settings` the variables that size the lane. */
  constructor(
    readonly limits: LaneLimits,
    readonly what: string,
    readonly settings: string,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * A place now, a place after waiting, or a refusal: at once when the queue is full, or when no place
   * freed within maxWaitMs (0: no time limit). A waiting request whose `signal` aborts (the client went
   * away) leaves the queue.
   */
  enter(signal?: AbortSignal): Promise<Entry> {
    if (signal?.aborted) return Promise.resolve(this.refusal('the client left'));
    if (this.inFlight < this.limits.maxInFlight) {
      this.inFlight++;
      return Promise.resolve(this.place());
    }
    if (this.waiting.length >= this.limits.maxQueue) {
      this.rejected++;
      return Promise.resolve(this.refusal('the queue is full'));
    }
    return new Promise((resolve) => {
      const settle = (entry: Entry) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(entry);
      };
      const leave = (why: string) => {
        const i = this.waiting.indexOf(settle);
        if (i >= 0) this.waiting.splice(i, 1);
        settle(this.refusal(why));
      };
      const onAbort = () => leave('the client left');
      const timer = this.limits.maxWaitMs > 0
        ? setTimeout(() => {
          this.rejected++;
          leave(`no place freed within ${this.limits.maxWaitMs} ms`);
        }, this.limits.maxWaitMs)
        : undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(settle);
    });
  }

  state(): GateState {
    return {
      in_flight: this.inFlight,
      queued: this.waiting.length,
      max_in_flight: this.limits.maxInFlight,
      max_queue: this.limits.maxQueue,
      admitted: this.admitted,
      rejected: this.rejected,
    };
  }

  private place(): Entry {
    this.admitted++;
    const start = this.now();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const held = this.now() - start;
      this.meanHoldMs = this.meanHoldMs === 0 ? held : this.meanHoldMs + HOLD_SMOOTHING * (held - this.meanHoldMs);
      const next = this.waiting.shift();
      // The place passes straight to the first waiter, so a newcomer can never overtake the queue.
      if (next) next(this.place());
      else this.inFlight--;
    };
    return { admitted: true, release };
  }

  /** Retry-After is roughly when a place frees up for a newcomer: the queue ahead drains through every place. */
  private refusal(why: string): Entry {
    const waitMs = ((this.waiting.length + 1) / this.limits.maxInFlight) * this.meanHoldMs;
    const retryAfterSeconds = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(waitMs / 1000)));
    const message = `Service busy: ${why}; ${this.inFlight} ${this.what} requests are running and ${this.waiting.length} ` +
      `waiting, the most this server takes (${this.settings}); retry in ${retryAfterSeconds} s`;
    return { admitted: false, retryAfterSeconds, message };
  }
}

export type AdmissionGates = Record<Lane, AdmissionGate>;

export function admissionGates(limits: Record<Lane, LaneLimits>): AdmissionGates {
  return {
    short: new AdmissionGate(limits.short, 'retrieval and search', 'CAIRN_MAX_INFLIGHT, CAIRN_MAX_QUEUE, CAIRN_MAX_QUEUE_WAIT_MS'),
    long: new AdmissionGate(limits.long, 'completion and upload', 'CAIRN_MAX_LONG_INFLIGHT, CAIRN_MAX_LONG_QUEUE, CAIRN_MAX_LONG_QUEUE_WAIT_MS'),
  };
}

function finished(req: Request, res: Response): boolean {
  return res.writableFinished || res.destroyed || req.socket.destroyed;
}

/** Runs the request once the gate gives it a place (held until the response ends or the client leaves), or answers 503. */
export function admit(gate: AdmissionGate): RequestHandler {
  return (req, res, next) => {
    const gone = new AbortController();
    const leave = () => gone.abort();
    res.once('close', leave);
    void gate.enter(gone.signal).then((entry) => {
      if (entry.admitted) {
        if (finished(req, res)) return entry.release();
        res.off('close', leave);
        res.once('finish', entry.release);
        res.once('close', entry.release);
        return next();
      }
      res.off('close', leave);
      if (finished(req, res)) return;
      res.setHeader('Retry-After', String(entry.retryAfterSeconds));
      sendError(res, 503, 503, entry.message);
    });
  };
}

/** The routes with each heavy route's lane admission in front of its own middleware (e.g. before an upload is read). */
export function withAdmission(routes: RouteSpec[], gates: AdmissionGates): RouteSpec[] {
  return routes.map((spec) =>
    spec.admission ? { ...spec, middleware: [admit(gates[spec.admission]), ...(spec.middleware ?? [])] } : spec);
}
