import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../deps.js';
import type { DocumentRow } from '../../src/store/documents.js';
import type { ChunkDraft } from '../../src/chunking/types.js';
import { embeddingText, withTitle } from '../../src/services/chunk-vectors.js';
import { readJson, readVectors, workPrefix, writeVectors } from '../work-files.js';
import { BANDS, STALE, asFailure, keepAlive, staleRun, throwIfCancelled, type RunGuard, type RunRef } from './run.js';

/** Embedding batch size: one model call, one heartbeat, one progress update. */
export const EMBED_BATCH = 32;

/**
 * Embedding requests a step keeps in flight: the next batch is with the model while this one is saved and
 * reported, so the model never waits for a step's bookkeeping (the last documents of a run are embedded
 * back to back). Few, because a stopped step's requests already sent are still embedded.
 */
const EMBED_IN_FLIGHT = 2;

/**
 * How often the embedding steps heartbeat (the last batch saved as its details). They learn of a stop from their
 * own progress write: it is made only while the run is still RUNNING, at the end of every batch. A heartbeat
 * every second from each of the 16 steps cost the dev server ~1–3 CPU-s per 100 documents (bench/ingest/README.md,
 * "Heartbeats"). With the SDK's 1 s throttle, 4 s still leaves the event loop ~5 s of the 10 s heartbeat timeout;
 * nothing of a parse holds it near that long (the index writes in slices of ~0.1–0.5 s, bench/ingest/index-writes.ts; chunking runs in the
 * parser process: docs/operations.md, "Large documents").
 */
const EMBED_HEARTBEAT_MS = 4000;

/** Where a run's embedding batches are saved. */
export function vectorsPrefix(doc: DocumentRow, ref: RunRef): string {
  return `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/vectors`;
}

/** Embeds a run's chunks with the dataset's embedding model. */
export type ChunkEmbedder = ReturnType<typeof chunkEmbedder>;

export function chunkEmbedder({ store, blobs, models }: Pick<ActivityDeps, 'store' | 'blobs' | 'models'>, { report }: RunGuard) {
  /** The chunks' vectors, in batches; each batch is saved as it is done and reused by a retried attempt. */
  /**
   * `options`: the progress band (the embed band unless told) and the title's share of each vector (the
   * pipeline Tokenizer's filename_embd_weight; TITLE_WEIGHT unless told).
   */
  return async function embed(ref: RunRef, doc: DocumentRow, drafts: ChunkDraft[], enriched?: boolean, options: { band?: readonly [number, number]; titleWeight?: number } = {}): Promise<number[][]> {
    const ds = await store.datasets.byId(doc.dataset_id);
    if (!ds) throw ApplicationFailure.nonRetryable(`dataset ${doc.dataset_id} no longer exists`, STALE);
    const model = await models.embedding(ds.tenant_id, ds.embedding_model);
    const prefix = vectorsPrefix(doc, ref);
    const batches = Math.ceil(drafts.length / EMBED_BATCH);
    const [from, to] = options.band ?? (enriched ? BANDS.embedAfterEnrich : BANDS.embed);
    const vectors: number[][] = [];
    // The title is embedded once, with the first batch sent (a resumed attempt sends it with its first).
    let title: Promise<number[]> | undefined;
    const requested = new Map<number, Promise<number[][]>>();
    const request = (b: number) => {
      if (b >= batches || requested.has(b)) return;
      const texts = drafts.slice(b * EMBED_BATCH, (b + 1) * EMBED_BATCH).map(embeddingText);
      let answer: Promise<number[][]>;
      if (title) answer = model.embed(texts);
      else {
        const withTitleText = model.embed([doc.name, ...texts]);
        title = withTitleText.then(([t]) => t!);
        answer = withTitleText.then(([, ...rest]) => rest);
      }
      // Awaited in order below; a failure of one sent ahead must not go unhandled meanwhile.
      title.catch(() => undefined);
      answer.catch(() => undefined);
      requested.set(b, answer);
    };
    let lastSaved = -1;
    const stop = keepAlive(EMBED_HEARTBEAT_MS, () => ({ batch: lastSaved }));
    try {
      for (let b = 0; b < batches; b++) {
        throwIfCancelled();
        const key = `${prefix}/${b}.bin`;
        // Batches are saved in order, so none after the first one sent was saved by an earlier attempt.
        const saved = requested.has(b) ? undefined : await readVectors(blobs, key);
        if (saved) {
          vectors.push(...saved);
          continue;
        }
        for (let ahead = b; ahead < b + EMBED_IN_FLIGHT; ahead++) request(ahead);
        const batch = withTitle(await requested.get(b)!, await title!, options.titleWeight);
        requested.delete(b);
        await writeVectors(blobs, key, batch);
        vectors.push(...batch);
        lastSaved = b;
        const done = Math.min((b + 1) * EMBED_BATCH, drafts.length);
        // Also how the step learns of a stop (a stopped, deleted or re-parsed run), at the end of each batch.
        if (!(await report(ref, from + ((to - from) * done) / drafts.length, `Embedding chunks: ${done}/${drafts.length}`))) throw staleRun(ref);
      }
      return vectors;
    } catch (err) {
      throw asFailure(err);
    } finally {
      stop();
    }
  };
}

/** Embedding alone, for runs started before embedding and indexing were one step. */
export function embedActivities({ blobs }: Pick<ActivityDeps, 'blobs'>, { currentRun }: RunGuard, embed: ChunkEmbedder) {
  return {
    /** Embeds in batches; each batch's vectors are saved, so a retried attempt resumes where the last stopped. */
    async embedChunks(ref: RunRef & { chunksKey: string; enriched?: boolean }): Promise<{ vectorsPrefix: string; batches: number }> {
      const doc = await currentRun(ref);
      const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
      await embed(ref, doc, drafts, ref.enriched);
      return { vectorsPrefix: vectorsPrefix(doc, ref), batches: Math.ceil(drafts.length / EMBED_BATCH) };
    },
  };
}
