/**
 * Keeping the analysed `text` of stored rows equal to what analysis.ts writes now. A collection whose
 * text comes from analysis.ts records the version of that analysis (ANALYSIS_VERSION) as a collection
 * property; new collections get the current one at creation. When an index opens a collection whose
 * version is older (or missing: made before versions were kept), it rewrites, in the background, the
 * text of the rows whose analysis changed, then stores the current version. Searches work meanwhile (rows
 * not yet rewritten only miss the words whose analysis changed). The rewrite is idempotent and the version
 * is stored only after it finished, so a crash or a close half-way leaves the version old and the next
 * open does it again.
 */
import { destination, pino } from 'pino';
import { ANALYSIS_PROPERTY, ANALYSIS_VERSION } from './analysis.js';
import type { CollectionCatalog } from './collections.js';

/** Where progress goes: pino's `info`/`warn` shape. */
export interface ProgressLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** The default log: JSON lines on stderr (stdout may be a protocol stream: `cairn mcp`). */
const stderrLog = (): ProgressLog =>
  pino({ base: { svc: 'cairn' }, timestamp: pino.stdTimeFunctions.isoTime }, destination({ dest: 2, sync: true }));

/**
 * Whether a text may analyse differently under version 1 than now. Version 1 (the tokenizer before
 * 2026-11-24) and version 2 (FTS5 unicode61's terms for every script) differ only on characters beyond
 * 7-bit ASCII: on 7-bit text both split words at every character outside [A-Za-z0-9] and lowercase them
 * (the tokenizer's ASCII path), so rows whose sources are 7-bit keep their text.
 */
export const mayAnalyseDifferently = (text: string) => /[^\x00-\x7f]/.test(text);

const PROGRESS_MS = 10_000;

export interface ReanalysisRun {
  /** Whether the index is closing: the rewrite stops between batches (the version stays old). */
  stopping(): boolean;
  /** Logs the counts so far, at most every 10 s. */
  progress(counts: Record<string, number>): void;
}

/** The rewrite of one collection's text: returns its counts (rows scanned, rows rewritten). */
export type Rewrite = (run: ReanalysisRun) => Promise<Record<string, number>>;

/** One collection's re-analysis, started when the index opens; `stop` before closing the client. */
export class Reanalysis {
  private stopRequested = false;
  /** Settles when the version is current, or the rewrite finished, failed (logged) or stopped. */
  readonly finished: Promise<void>;

  constructor(catalog: CollectionCatalog, collection: string, rewrite: Rewrite, log?: ProgressLog) {
    this.finished = this.run(catalog, collection, rewrite, log);
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    await this.finished;
  }

  private async run(catalog: CollectionCatalog, collection: string, rewrite: Rewrite, given?: ProgressLog): Promise<void> {
    let log = given;
    try {
      const version = Number(await catalog.property(collection, ANALYSIS_PROPERTY) ?? 1);
      if (version >= ANALYSIS_VERSION || this.stopRequested) return;
      log ??= stderrLog();
      const fields = { collection, from: version, to: ANALYSIS_VERSION };
      log.info(fields, 'Milvus: re-analysing the text of stored rows in the background');
      const started = Date.now();
      let reported = started;
      const counts = await rewrite({
        stopping: () => this.stopRequested,
        progress: (now) => {
          if (Date.now() - reported < PROGRESS_MS) return;
          reported = Date.now();
          log!.info({ ...fields, ...now }, 'Milvus: re-analysing');
        },
      });
      if (this.stopRequested) {
        log.info({ ...fields, ...counts }, 'Milvus: re-analysis stopped (the index closed); the next start resumes it');
        return;
      }
      await catalog.setProperty(collection, ANALYSIS_PROPERTY, String(ANALYSIS_VERSION));
      log.info({ ...fields, ...counts, ms: Date.now() - started }, 'Milvus: re-analysis done');
    } catch (err) {
      (log ?? stderrLog()).warn({ collection, err: err instanceof Error ? err.message : String(err) },
        'Milvus: re-analysis failed; the next start tries again');
    }
  }
}
