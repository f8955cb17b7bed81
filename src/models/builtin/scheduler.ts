export interface BatchLimits {
  /** Most texts in one model run. */
  maxTexts: number;
  /** Most padded tokens (texts x longest text) in one model run; bounds how long one run takes. */
  maxTokens: number;
  /**
   * Texts of the waiting requests that are sorted together by length when a batch is formed, so that
   * a batch holds texts of nearly the same length whichever request they come from (little padding).
   */
  window: number;
}

/** Runs the model on one batch of token-id rows; returns batch.length * dims floats. */
export type RunBatch = (batch: number[][]) => Promise<Float32Array>;

interface Job {
  tokens: number[][];
  /** Indices of the texts not yet sent to the model, by ascending length. */
  pending: number[];
  /** Texts embedded so far. */
  done: number;
  out: Float32Array;
  resolve: (vectors: Float32Array) => void;
  reject: (err: unknown) => void;
}

interface Row {
  job: Job;
  text: number;
  length: number;
}

/** A request this small (a retrieval query) is run on its own, so it waits for at most the running batch. */
const INTERACTIVE_TEXTS = 2;

/**
 * What one model run costs beyond its padded tokens, in padded tokens: ~2.5 ms of CPU against ~0.3 ms per
 * padded token for MiniLM on 2 cores (bench/ingest/README.md, "Batch composition").
 */
const RUN_COST_TOKENS = 8;

/**
 * Feeds embedding requests to the model one batch at a time. The request with the fewest texts left
 * goes first: a retrieval query waits for at most one running batch of a large ingestion request, not
 * for the whole request. Larger requests share batches: the texts waiting in the first `window` of them
 * are sorted by length and cut into the cheapest batches of neighbours (`cheapestBatches`: the fewest
 * padded tokens and runs); the batch holding the shortest text of the request being served runs next, so
 * that request always advances and each batch holds texts of nearly one length, whichever request they
 * come from.
 */
export class EmbedScheduler {
  private readonly jobs: Job[] = [];
  private running = false;

  constructor(
    private readonly run: RunBatch,
    private readonly dims: number,
    private readonly limits: BatchLimits,
  ) {}

  /** Requests accepted and not yet answered. */
  get pendingRequests(): number {
    return this.jobs.length;
  }

  /** Embeds tokenized texts; resolves with texts.length * dims floats in input order. */
  submit(tokens: number[][]): Promise<Float32Array> {
    if (tokens.length === 0) return Promise.resolve(new Float32Array(0));
    const pending = tokens.map((_, i) => i).sort((a, b) => tokens[a]!.length - tokens[b]!.length);
    return new Promise((resolve, reject) => {
      this.jobs.push({ tokens, pending, done: 0, out: new Float32Array(tokens.length * this.dims), resolve, reject });
      // After the current task: requests submitted together are batched together from the start.
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.jobs.length > 0) {
        const rows = this.nextBatch();
        for (const job of new Set(rows.map((r) => r.job))) {
          const taken = new Set(rows.filter((r) => r.job === job).map((r) => r.text));
          job.pending = job.pending.filter((text) => !taken.has(text));
        }
        try {
          const vectors = await this.run(rows.map((r) => r.job.tokens[r.text]!));
          rows.forEach((r, i) => r.job.out.set(vectors.subarray(i * this.dims, (i + 1) * this.dims), r.text * this.dims));
          for (const r of rows) r.job.done++;
          for (const job of new Set(rows.map((r) => r.job))) if (job.done === job.tokens.length) this.finish(job).resolve(job.out);
        } catch (err) {
          for (const job of new Set(rows.map((r) => r.job))) this.finish(job).reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** The rows of the next model run (never empty while a job waits). */
  private nextBatch(): Row[] {
    // The request with the fewest texts left; the oldest among equals (the sort is stable).
    const byRemaining = this.jobs.filter((j) => j.pending.length > 0).sort((a, b) => a.pending.length - b.pending.length);
    const anchor = byRemaining[0]!;
    // At most a window of each request's texts: its shortest, which come next anyway.
    const rowsOf = (job: Job): Row[] => job.pending.slice(0, this.limits.window).map((text) => ({ job, text, length: job.tokens[text]!.length }));
    if (anchor.tokens.length <= INTERACTIVE_TEXTS) return batchHolding(rowsOf(anchor), 0, this.limits);
    // The window: the anchor's texts and those of the next requests in the same order, sorted by length.
    const pool: Row[] = [];
    for (const job of byRemaining) {
      if (job.tokens.length <= INTERACTIVE_TEXTS) continue;
      if (pool.length > 0 && pool.length + job.pending.length > this.limits.window) break;
      pool.push(...rowsOf(job));
    }
    pool.sort((a, b) => a.length - b.length);
    // The anchor's shortest text, so the request being served always advances.
    return batchHolding(pool, pool.findIndex((r) => r.job === anchor && r.text === anchor.pending[0]), this.limits);
  }

  private finish(job: Job): Job {
    const i = this.jobs.indexOf(job);
    if (i >= 0) this.jobs.splice(i, 1);
    return job;
  }
}

/** The batch holding sorted[index] when the rows (ascending length) are cut into the cheapest batches. */
function batchHolding(sorted: Row[], index: number, limits: BatchLimits): Row[] {
  const [from, to] = cheapestBatches(sorted.map((r) => r.length), limits).find(([lo, hi]) => lo <= index && index < hi)!;
  return sorted.slice(from, to);
}

/**
 * Cuts lengths sorted in ascending order into consecutive batches within the limits, at the least total
 * cost: padded tokens (texts x longest) plus RUN_COST_TOKENS per batch. Returns [from, to) index pairs in
 * order. Where costs tie, earlier batches are the larger. O(lengths x maxTexts).
 */
export function cheapestBatches(lengths: number[], limits: Pick<BatchLimits, 'maxTexts' | 'maxTokens'>): Array<[number, number]> {
  const n = lengths.length;
  // cost[i]: the least cost of batching lengths[i..n); size[i]: the size of the first batch in it.
  const cost = new Float64Array(n + 1);
  const size = new Int32Array(n + 1);
  for (let i = n - 1; i >= 0; i--) {
    cost[i] = Infinity;
    for (let k = 1; k <= limits.maxTexts && i + k <= n; k++) {
      const padded = k * lengths[i + k - 1]!;
      // One text alone always runs, however long.
      if (k > 1 && padded > limits.maxTokens) break;
      const c = padded + RUN_COST_TOKENS + cost[i + k]!;
      if (c <= cost[i]!) {
        cost[i] = c;
        size[i] = k;
      }
    }
  }
  const batches: Array<[number, number]> = [];
  for (let i = 0; i < n; i += size[i]!) batches.push([i, i + size[i]!]);
  return batches;
}
