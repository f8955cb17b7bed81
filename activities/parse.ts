import { createHash } from 'node:crypto';
import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './deps.js';
import type { DocumentRow } from '../src/store/documents.js';
import type { ExtractedDocument } from '../src/parsing/types.js';
import type { ChunkDraft } from '../src/chunking/types.js';
import type { IndexedChunk } from '../src/index/types.js';
import { parserPool } from '../src/parsing/parser-pool.js';
import { chunkDocument as runChunker, type ChunkMethod } from '../src/chunking/index.js';
import { countTokens } from '../src/text/tokens.js';
import { chunkVectors } from '../src/services/chunk-vectors.js';
import { chunkImageKey } from '../src/services/blob-keys.js';
import { nowMs, toDateTime } from '../src/time.js';
import { readJson, readVectors, workPrefix, writeJson, writeVectors } from './work-files.js';

export interface RunRef {
  documentId: string;
  runSeq: number;
}

/** Embedding batch size: one model call, one heartbeat, one progress update. */
const EMBED_BATCH = 32;

/** Progress bands of the stages, so the document's progress only goes up. */
const BANDS = { extract: [0.02, 0.4], chunk: [0.4, 0.45], embed: [0.45, 0.95], index: [0.95, 1] } as const;

/** Thrown when the run is no longer the document's current one: the workflow ends without writing. */
const STALE = 'StaleRun';

export function parseActivities({ store, index, blobs, models }: ActivityDeps) {
  // Built now so that invalid CAIRN_PARSE_* settings stop the worker at start, not each parse.
  const parsers = parserPool();

  /** The document, if this run is still its current RUNNING run; otherwise a non-retryable StaleRun. */
  async function currentRun(ref: RunRef): Promise<DocumentRow> {
    const doc = await store.documents.byId(ref.documentId);
    if (!doc || doc.run_seq !== ref.runSeq || doc.run !== 'RUNNING') {
      throw ApplicationFailure.nonRetryable(`run ${ref.runSeq} of document ${ref.documentId} is no longer current`, STALE);
    }
    return doc;
  }

  async function report(ref: RunRef, progress: number, message: string): Promise<void> {
    await store.documents.updateRun(ref.documentId, ref.runSeq, { progress, progress_msg: message, update_time: nowMs() });
  }

  return {
    async extractDocument(ref: RunRef): Promise<{ sectionsKey: string; pages: number; sections: number }> {
      const doc = await currentRun(ref);
      const [from, to] = BANDS.extract;
      await report(ref, from, `Reading ${doc.name}`);
      const bytes = await blobs.get(doc.location);
      if (!bytes) throw ApplicationFailure.nonRetryable(`the file of ${doc.name} is missing from storage`, 'MissingFile');
      const ctx = Context.current();
      let last = 0;
      const stop = keepAlive();
      try {
        // An empty file is a document with nothing in it (zero chunks, DONE), as in RAGFlow, not a corrupt one.
        const extracted: ExtractedDocument = bytes.byteLength === 0 ? { sections: [], pages: 0, meta: {} } : await parsers.extract(bytes, doc.name, {
          signal: ctx.cancellationSignal,
          onProgress: (fraction, message) => {
            heartbeat({ fraction });
            if (Date.now() - last > 500) {
              last = Date.now();
              void report(ref, from + (to - from) * fraction, message);
            }
          },
        });
        throwIfCancelled();
        const sectionsKey = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/sections.json`;
        await writeJson(blobs, sectionsKey, extracted);
        await report(ref, to, `Extracted ${extracted.sections.length} sections from ${extracted.pages} page(s)`);
        return { sectionsKey, pages: extracted.pages, sections: extracted.sections.length };
      } catch (err) {
        throw asFailure(err);
      } finally {
        stop();
      }
    },

    async chunkDocument(ref: RunRef & { sectionsKey: string }): Promise<{ chunksKey: string; chunks: number; tokens: number }> {
      const doc = await currentRun(ref);
      const extracted = await readJson<ExtractedDocument>(blobs, ref.sectionsKey);
      const drafts = runChunker(extracted, doc.chunk_method as ChunkMethod, JSON.parse(doc.parser_config), { filename: doc.name });
      const chunksKey = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/chunks.json`;
      await writeJson(blobs, chunksKey, drafts);
      const tokens = drafts.reduce((n, d) => n + countTokens(d.content), 0);
      await report(ref, BANDS.chunk[1], `Split into ${drafts.length} chunks (${tokens} tokens)`);
      return { chunksKey, chunks: drafts.length, tokens };
    },

    /** Embeds in batches; each batch's vectors are saved, so a retried attempt resumes where the last stopped. */
    async embedChunks(ref: RunRef & { chunksKey: string }): Promise<{ vectorsPrefix: string; batches: number }> {
      const doc = await currentRun(ref);
      const ds = await store.datasets.byId(doc.dataset_id);
      if (!ds) throw ApplicationFailure.nonRetryable(`dataset ${doc.dataset_id} no longer exists`, STALE);
      const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
      const model = await models.embedding(ds.tenant_id, ds.embedding_model);
      const vectorsPrefix = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/vectors`;
      const batches = Math.ceil(drafts.length / EMBED_BATCH);
      const [from, to] = BANDS.embed;
      const stop = keepAlive();
      try {
        const [titleVector] = await model.embed([doc.name]);
        for (let b = 0; b < batches; b++) {
          throwIfCancelled();
          const key = `${vectorsPrefix}/${b}.bin`;
          if (await blobs.get(key)) continue;
          const batch = drafts.slice(b * EMBED_BATCH, (b + 1) * EMBED_BATCH);
          await writeVectors(blobs, key, await chunkVectors(model, titleVector, batch));
          heartbeat({ batch: b });
          const done = Math.min((b + 1) * EMBED_BATCH, drafts.length);
          await report(ref, from + ((to - from) * done) / drafts.length, `Embedding chunks: ${done}/${drafts.length}`);
        }
        return { vectorsPrefix, batches };
      } catch (err) {
        throw asFailure(err);
      } finally {
        stop();
      }
    },

    /** Replaces the document's chunks with this run's, then marks it DONE. Idempotent. */
    async indexChunks(ref: RunRef & { chunksKey: string; vectorsPrefix: string; batches: number }): Promise<{ chunks: number; tokens: number }> {
      const doc = await currentRun(ref);
      const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
      const vectors: number[][] = [];
      for (let b = 0; b < ref.batches; b++) {
        const part = await readVectors(blobs, `${ref.vectorsPrefix}/${b}.bin`);
        if (!part) throw new Error(`embedding batch ${b} is missing`);
        vectors.push(...part);
      }
      const now = nowMs();
      const chunks: IndexedChunk[] = [];
      for (const [i, d] of drafts.entries()) {
        const id = chunkId(doc.id, ref.runSeq, i);
        let imageId = '';
        if (d.image) {
          imageId = `${doc.dataset_id}-${id}`;
          await blobs.put(chunkImageKey(doc.dataset_id, id), d.image);
        }
        chunks.push({
          id,
          tenant_id: doc.tenant_id,
          dataset_id: doc.dataset_id,
          document_id: doc.id,
          document_name: doc.name,
          content: d.content,
          important_keywords: d.important_keywords ?? [],
          questions: d.questions ?? [],
          tag_kwd: d.tag_kwd ?? [],
          image_id: imageId,
          positions: d.positions ?? [],
          available: true,
          create_time: toDateTime(now),
          create_timestamp: now / 1000,
          parent_content: d.parent_content,
          vector: vectors[i],
        });
      }
      await index.deleteByDocument(doc.id);
      await index.upsert(chunks);
      const tokens = drafts.reduce((n, d) => n + countTokens(d.content), 0);
      const seconds = (nowMs() - (doc.process_begin_at ?? now)) / 1000;
      const written = await store.documents.updateRun(doc.id, ref.runSeq, {
        run: 'DONE',
        progress: 1,
        progress_msg: `Done: ${chunks.length} chunks, ${tokens} tokens in ${seconds.toFixed(1)} s`,
        chunk_count: chunks.length,
        token_count: tokens,
        process_duration: seconds,
        update_time: nowMs(),
      }, 'RUNNING');
      if (!written) {
        // Stopped, deleted or re-parsed while we wrote: leave nothing of this run behind.
        const now2 = await store.documents.byId(doc.id);
        if (!now2 || now2.run_seq === ref.runSeq) await index.deleteByDocument(doc.id);
        throw ApplicationFailure.nonRetryable(`run ${ref.runSeq} of document ${doc.id} was superseded`, STALE);
      }
      return { chunks: chunks.length, tokens };
    },

    async markCancelled(ref: RunRef): Promise<void> {
      const doc = await store.documents.byId(ref.documentId);
      if (!doc || doc.run_seq !== ref.runSeq) return;
      await index.deleteByDocument(doc.id);
      await store.documents.updateRun(doc.id, ref.runSeq, {
        run: 'CANCEL',
        progress_msg: 'Cancelled: parsing was stopped; partial chunks were removed',
        chunk_count: 0,
        token_count: 0,
        process_duration: (nowMs() - (doc.process_begin_at ?? nowMs())) / 1000,
        update_time: nowMs(),
      });
    },

    async markFailed(ref: RunRef & { message: string }): Promise<void> {
      const doc = await store.documents.byId(ref.documentId);
      if (!doc || doc.run_seq !== ref.runSeq || doc.run !== 'RUNNING') return;
      await index.deleteByDocument(doc.id);
      await store.documents.updateRun(doc.id, ref.runSeq, {
        run: 'FAIL',
        progress_msg: `Failed: ${ref.message}`,
        chunk_count: 0,
        token_count: 0,
        process_duration: (nowMs() - (doc.process_begin_at ?? nowMs())) / 1000,
        update_time: nowMs(),
      });
    },

    async removeWorkFiles(ref: RunRef & { datasetId: string }): Promise<void> {
      await blobs.deletePrefix(workPrefix(ref.datasetId, ref.documentId, ref.runSeq));
    },
  };
}

/** Deterministic per run and position, so a retried index step overwrites instead of duplicating. */
function chunkId(documentId: string, runSeq: number, ordinal: number): string {
  return createHash('sha256').update(`${documentId}:${runSeq}:${ordinal}`).digest('hex').slice(0, 32);
}

/** Heartbeats every second while a long step runs, so a dead worker is noticed and cancels arrive. */
function keepAlive(): () => void {
  const timer = setInterval(() => heartbeat(), 1000);
  return () => clearInterval(timer);
}

function throwIfCancelled(): void {
  if (Context.current().cancellationSignal.aborted) throw new CancelledFailure('parsing was cancelled');
}

/** Errors of a file that cannot be read, or that goes over a parsing limit or ceiling: retrying would not help. */
const BAD_INPUT = new Set(['UnsupportedFormatError', 'CorruptFileError', 'ParseLimitError']);

/** Bad input fails the document at once; anything else is retried by Temporal. */
function asFailure(err: unknown): unknown {
  if (err instanceof Error && BAD_INPUT.has(err.name)) return ApplicationFailure.nonRetryable(err.message, err.name);
  if (Context.current().cancellationSignal.aborted) return new CancelledFailure('parsing was cancelled');
  return err;
}
