export interface BatchLimits {
  /** Most texts in one model run. */
  maxTexts: number;
  /** Most padded tokens (texts x longest text) in one model run; bounds how long one run takes. */
  maxTokens: number;
}

/** Runs the model on one batch of token-id rows; returns batch.length * dims floats. */
export type RunBatch = (batch: number[][]) => Promise<Float32Array>;

interface Job {
  tokens: number[][];
  /** Text indices by ascending length, so each batch holds texts of similar length (little padding). */
  order: number[];
  done: number;
  out: Float32Array;
  resolve: (vectors: Float32Array) => void;
  reject: (err: unknown) => void;
}

const remaining = (job: Job) => job.order.length - job.done;

/**
 * Feeds embedding requests to the model one batch at a time, always continuing the request with the
 * fewest texts left. A retrieval query (one text) therefore waits for at most one running batch of a
 * large ingestion request instead of for the whole request.
 */
export class EmbedScheduler {
  private readonly jobs: Job[] = [];
  private running = false;

  constructor(
    private readonly run: RunBatch,
    private readonly dims: number,
    private readonly limits: BatchLimits,
  ) {}

  /** Embeds tokenized texts; resolves with texts.length * dims floats in input order. */
  submit(tokens: number[][]): Promise<Float32Array> {
    if (tokens.length === 0) return Promise.resolve(new Float32Array(0));
    const order = tokens.map((_, i) => i).sort((a, b) => tokens[a]!.length - tokens[b]!.length);
    return new Promise((resolve, reject) => {
      this.jobs.push({ tokens, order, done: 0, out: new Float32Array(tokens.length * this.dims), resolve, reject });
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.jobs.length > 0) {
        const job = this.jobs.reduce((a, b) => (remaining(b) < remaining(a) ? b : a));
        const rows = this.takeBatch(job);
        try {
          const vectors = await this.run(rows.map((i) => job.tokens[i]!));
          rows.forEach((textIndex, r) =>
            job.out.set(vectors.subarray(r * this.dims, (r + 1) * this.dims), textIndex * this.dims),
          );
          job.done += rows.length;
          if (remaining(job) === 0) this.finish(job).resolve(job.out);
        } catch (err) {
          this.finish(job).reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private takeBatch(job: Job): number[] {
    const rows: number[] = [];
    for (let k = job.done; k < job.order.length && rows.length < this.limits.maxTexts; k++) {
      const textIndex = job.order[k]!;
      // Lengths ascend, so this text sets the padded length of the batch.
      const padded = (rows.length + 1) * job.tokens[textIndex]!.length;
      if (rows.length > 0 && padded > this.limits.maxTokens) break;
      rows.push(textIndex);
    }
    return rows;
  }

  private finish(job: Job): Job {
    this.jobs.splice(this.jobs.indexOf(job), 1);
    return job;
  }
}
