import { createHash } from 'node:crypto';
import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './deps.js';
import type { BlobStore } from '../src/blobs/types.js';
import type { DocumentRow } from '../src/store/documents.js';
import type { ExtractedDocument } from '../src/parsing/types.js';
import type { ChunkDraft } from '../src/chunking/types.js';
import type { IndexedChunk } from '../src/index/chunks/chunk-index.js';
import { chunkFile, draftTokens, encodeChunks, type ChunkRequest, type EncodedChunks } from '../src/chunking/chunk-file.js';
import type { ExtractOptions } from '../src/parsing/extractor.js';
import type { ChunkMethod } from '../src/chunking/index.js';
import { embeddingText, withTitle } from '../src/services/chunk-vectors.js';
import { chunkImageKey } from '../src/services/blob-keys.js';
import { nowMs, toDateTime } from '../src/time.js';
import { nextTurn } from '../src/batching.js';
import { readJson, readVectors, workPrefix, writeJson, writeVectors } from './work-files.js';
import { enrichChunks as generateKeywords, enrichmentLabel, keywordSettings, wantsEnrichment, type EnrichmentProgress, type KeywordSettings } from '../src/enrichment/keywords.js';
import { ModelError } from '../src/models/types.js';
import { raptorEnabled } from '../src/enrichment/raptor/settings.js';
import { graphSettings } from '../src/enrichment/graph/settings.js';

export interface RunRef {
  documentId: string;
  runSeq: number;
}

/** A document split into chunks: the chunks' work file, their counts, and the enrichment asked for. */
export interface ChunkedRun {
  chunksKey: string;
  chunks: number;
  tokens: number;
  enrich: KeywordSettings;
}

/** Embedding batch size: one model call, one heartbeat, one progress update. */
const EMBED_BATCH = 32;

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

/**
 * Progress bands of the stages, so the document's progress only goes up. Generating keywords and
 * questions (when asked for) is the slow stage: the embedding starts after its band.
 */
const BANDS = { extract: [0.02, 0.4], chunk: [0.4, 0.45], enrich: [0.45, 0.75], embed: [0.45, 0.95], embedAfterEnrich: [0.75, 0.95], index: [0.95, 1] } as const;

/** Thrown when the run is no longer the document's current one: the workflow ends without writing. */
const STALE = 'StaleRun';

export function parseActivities({ store, index, blobs, models, parsers, enrichConcurrency: concurrency }: ActivityDeps) {

  /** The document, if this run is still its current RUNNING run; otherwise a non-retryable StaleRun. */
  async function currentRun(ref: RunRef): Promise<DocumentRow> {
    const doc = await store.documents.byId(ref.documentId);
    if (!doc || doc.run_seq !== ref.runSeq || doc.run !== 'RUNNING') throw staleRun(ref);
    return doc;
  }

  /**
   * A signal that aborts when the activity is cancelled or when the run stops being the document's
   * current one (stopped, deleted, re-parsed): Temporal delivers a cancel with a heartbeat response,
   * which the SDK throttles to seconds, and every second of model calls after a stop is paid for.
   */
  function watchRun(ref: RunRef) {
    const controller = new AbortController();
    const cancelled = Context.current().cancellationSignal;
    const onCancel = () => controller.abort(cancelled.reason);
    cancelled.addEventListener('abort', onCancel, { once: true });
    let stale = false;
    const timer = setInterval(() => {
      void store.documents.byId(ref.documentId).then(
        (doc) => {
          if (doc && doc.run_seq === ref.runSeq && doc.run === 'RUNNING') return;
          stale = true;
          controller.abort(new CancelledFailure(`run ${ref.runSeq} of document ${ref.documentId} is no longer current`));
        },
        () => undefined, // a failed look-up proves nothing: the next one decides
      );
    }, 1000);
    return {
      signal: controller.signal,
      stale: () => stale,
      stop: () => {
        clearInterval(timer);
        cancelled.removeEventListener('abort', onCancel);
      },
    };
  }

  /** The run's progress, written only while it is the document's RUNNING run: a stopped run's message stays. Whether it was written. */
  async function report(ref: RunRef, progress: number, message: string): Promise<boolean> {
    return store.documents.updateRun(ref.documentId, ref.runSeq, { progress, progress_msg: message, update_time: nowMs() }, 'RUNNING');
  }

  /**
   * `parse` run on the document's file (in a parser process), with progress reported in the extract band; an
   * empty file is a document with nothing in it (zero chunks, DONE), as in RAGFlow, not a corrupt one: `empty` answers it.
   */
  async function parseFile<T>(ref: RunRef, doc: DocumentRow, parse: (bytes: Uint8Array, options: ExtractOptions) => Promise<T>, empty: () => T): Promise<T> {
    const [from, to] = BANDS.extract;
    await report(ref, from, `Reading ${doc.name}`);
    const bytes = await blobs.get(doc.location);
    if (!bytes) throw ApplicationFailure.nonRetryable(`the file of ${doc.name} is missing from storage`, 'MissingFile');
    const ctx = Context.current();
    let last = 0;
    const stop = keepAlive();
    try {
      const result = bytes.byteLength === 0 ? empty() : await parse(bytes, {
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
      return result;
    } catch (err) {
      throw asFailure(err);
    } finally {
      stop();
    }
  }

  /** The file's sections (runs started before extraction and chunking were one step). */
  async function extract(ref: RunRef, doc: DocumentRow): Promise<ExtractedDocument> {
    const extracted = await parseFile(ref, doc, (bytes, options) => parsers.extract(bytes, doc.name, options), () => EMPTY_DOCUMENT);
    await report(ref, BANDS.extract[1], extractedMessage(extracted.sections.length, extracted.pages));
    return extracted;
  }

  /** The chunks go to a work file, as encoded, for the steps after; `config` is the document's parser_config. */
  async function saveChunks(ref: RunRef, doc: DocumentRow, { draftsJson, chunks, tokens }: EncodedChunks, config: ChunkRequest['config']): Promise<ChunkedRun> {
    const chunksKey = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/chunks.json`;
    await blobs.put(chunksKey, Buffer.from(draftsJson));
    await report(ref, BANDS.chunk[1], `Split into ${chunks} chunks (${tokens} tokens)`);
    return { chunksKey, chunks, tokens, enrich: keywordSettings(config) };
  }

  function vectorsPrefix(doc: DocumentRow, ref: RunRef): string {
    return `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/vectors`;
  }

  /** The chunks' vectors, in batches; each batch is saved as it is done and reused by a retried attempt. */
  async function embed(ref: RunRef, doc: DocumentRow, drafts: ChunkDraft[], enriched?: boolean): Promise<number[][]> {
    const ds = await store.datasets.byId(doc.dataset_id);
    if (!ds) throw ApplicationFailure.nonRetryable(`dataset ${doc.dataset_id} no longer exists`, STALE);
    const model = await models.embedding(ds.tenant_id, ds.embedding_model);
    const prefix = vectorsPrefix(doc, ref);
    const batches = Math.ceil(drafts.length / EMBED_BATCH);
    const [from, to] = enriched ? BANDS.embedAfterEnrich : BANDS.embed;
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
        const batch = withTitle(await requested.get(b)!, await title!);
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
  }

  /** Replaces the document's chunks with this run's and marks it DONE; a superseded run leaves nothing behind. */
  async function indexRun(ref: RunRef, doc: DocumentRow, drafts: ChunkDraft[], vectors: number[][], counted?: number): Promise<{ chunks: number; tokens: number }> {
    const now = nowMs();
    const chunks = await chunkRecords(doc, ref.runSeq, drafts, vectors, now, blobs);
    await index.deleteByDocument(doc.id);
    await index.upsert(chunks);
    const tokens = counted ?? draftTokens(drafts);
    const seconds = (nowMs() - (doc.process_begin_at ?? now)) / 1000;
    const written = await store.documents.updateRun(doc.id, ref.runSeq, {
      run: 'DONE',
      progress: 1,
      progress_msg: doneMessage(chunks.length, tokens, seconds),
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
  }

  /** Whether the document's new chunks concern the dataset's RAPTOR job or its knowledge graph. */
  async function afterParse(doc: DocumentRow): Promise<{ raptor: boolean; graph: boolean }> {
    const ds = await store.datasets.byId(doc.dataset_id);
    if (!ds) return { raptor: false, graph: false };
    const datasetConfig = JSON.parse(ds.parser_config) as Record<string, unknown>;
    return {
      raptor: raptorEnabled(JSON.parse(doc.parser_config) as Record<string, unknown>) || raptorEnabled(datasetConfig),
      graph: graphSettings(datasetConfig).enabled,
    };
  }

  return {
    /** Extraction alone, for runs started before extraction and chunking were one step. */
    async extractDocument(ref: RunRef): Promise<{ sectionsKey: string; pages: number; sections: number }> {
      const doc = await currentRun(ref);
      const extracted = await extract(ref, doc);
      const sectionsKey = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/sections.json`;
      await writeJson(blobs, sectionsKey, extracted);
      return { sectionsKey, pages: extracted.pages, sections: extracted.sections.length };
    },

    /** Chunking alone, for runs started before extraction and chunking were one step. */
    async chunkDocument(ref: RunRef & { sectionsKey: string }): Promise<ChunkedRun> {
      const doc = await currentRun(ref);
      const request = chunkRequest(doc);
      return saveChunks(ref, doc, encodeChunks(chunkFile(await readJson<ExtractedDocument>(blobs, ref.sectionsKey), request, doc.name)), request.config);
    },

    /**
     * The file's sections, split into chunks, in one step and in the parser process (the sections never leave
     * it; the chunker's token counts, seconds for a book, hold neither this process's event loop nor its memory).
     * It runs on the extraction queue, whose few slots match the parser processes, so files waiting for a parser
     * never hold the slots the embedding steps need. `enrich`: the keywords and questions the model is to write
     * per chunk (the workflow skips that step when none).
     */
    async extractAndChunk(ref: RunRef): Promise<ChunkedRun & { pages: number; sections: number }> {
      const doc = await currentRun(ref);
      const request = chunkRequest(doc);
      const chunked = await parseFile(ref, doc, (bytes, options) => parsers.extractAndChunk(bytes, doc.name, request, options), () => encodeChunks(chunkFile(EMPTY_DOCUMENT, request, doc.name)));
      await report(ref, BANDS.extract[1], extractedMessage(chunked.sections, chunked.pages));
      return { ...(await saveChunks(ref, doc, chunked, request.config)), pages: chunked.pages, sections: chunked.sections };
    },

    /**
     * parser_config auto_keywords / auto_questions: the dataset's chat model writes keywords and
     * questions for each chunk, stored with it (keywords searched, questions searched and embedded).
     * Every answer is kept in the enrichment cache as it arrives, so a retried attempt (a killed
     * worker, a model failure) and a later re-parse ask only what was never answered.
     */
    async enrichChunks(ref: RunRef & { chunksKey: string; enrich: KeywordSettings }): Promise<{ chunksKey: string; progress?: EnrichmentProgress }> {
      const doc = await currentRun(ref);
      if (!wantsEnrichment(ref.enrich)) return { chunksKey: ref.chunksKey };
      const ds = await store.datasets.byId(doc.dataset_id);
      if (!ds) throw ApplicationFailure.nonRetryable(`dataset ${doc.dataset_id} no longer exists`, STALE);
      const label = enrichmentLabel(ref.enrich);
      const llmId = (JSON.parse(doc.parser_config) as { llm_id?: unknown }).llm_id;
      const model = await models.chat(ds.tenant_id, typeof llmId === 'string' && llmId ? llmId : null).catch((err: Error) => {
        throw ApplicationFailure.nonRetryable(`generating ${label} needs a chat model (parser_config.llm_id or the default chat model): ${err.message}`, 'NoChatModel');
      });
      const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
      const [from, to] = BANDS.enrich;
      await report(ref, from, `Generating ${label}: 0/${drafts.length} chunks`);
      const stop = keepAlive();
      const run = watchRun(ref);
      try {
        const { drafts: enriched, progress } = await generateKeywords(drafts, ref.enrich, {
          cache: store.enrichment,
          tenantId: ds.tenant_id,
          model,
          concurrency,
          signal: run.signal,
          onProgress: async (p) => {
            heartbeat(p);
            await report(ref, from + ((to - from) * p.done) / Math.max(1, p.total), `Generating ${label}: ${p.done}/${p.total} chunks`);
          },
        });
        const chunksKey = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/chunks-enriched.json`;
        await writeJson(blobs, chunksKey, enriched);
        const calls = progress.model_calls + progress.cached_calls;
        await report(ref, to, `Generated ${label} for ${drafts.length} chunks: ${calls} model answers (${progress.cached_calls} from cache), ${progress.tokens} tokens`);
        // The counts in the result: the step's cost stays readable in the workflow history (Temporal UI, bench/enrich).
        return { chunksKey, progress };
      } catch (err) {
        if (run.stale()) throw staleRun(ref);
        throw enrichmentFailure(err, label, model.id);
      } finally {
        run.stop();
        stop();
      }
    },

    /** Embeds in batches; each batch's vectors are saved, so a retried attempt resumes where the last stopped. */
    async embedChunks(ref: RunRef & { chunksKey: string; enriched?: boolean }): Promise<{ vectorsPrefix: string; batches: number }> {
      const doc = await currentRun(ref);
      const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
      await embed(ref, doc, drafts, ref.enriched);
      return { vectorsPrefix: vectorsPrefix(doc, ref), batches: Math.ceil(drafts.length / EMBED_BATCH) };
    },

    /** Replaces the document's chunks with this run's, then marks it DONE. Idempotent. */
    async indexChunks(ref: RunRef & { chunksKey: string; vectorsPrefix: string; batches: number }): Promise<{ chunks: number; tokens: number }> {
      // Writing to a remote index (Milvus) can take longer than the heartbeat timeout: heartbeat meanwhile.
      const stop = keepAlive();
      try {
        const doc = await currentRun(ref);
        const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
        const vectors: number[][] = [];
        for (let b = 0; b < ref.batches; b++) {
          const part = await readVectors(blobs, `${ref.vectorsPrefix}/${b}.bin`);
          if (!part) throw new Error(`embedding batch ${b} is missing`);
          vectors.push(...part);
        }
        return await indexRun(ref, doc, drafts, vectors);
      } finally {
        stop();
      }
    },

    /**
     * Embeds the chunks (resuming from the batches a failed attempt saved), replaces the document's
     * chunks with them, marks it DONE and removes the run's work files: one step where there were three,
     * each a round trip through Temporal. A retry after the DONE was written finds the run DONE and
     * answers with its counts. `tokens`: the chunks' tokens as the chunk step counted them (the
     * enrichment step does not change chunk texts). `raptor` and `graph`: whether the dataset's RAPTOR or graph job is to hear
     * of the new chunks (the workflow schedules those steps only then).
     */
    async embedAndIndex(ref: RunRef & { chunksKey: string; enriched?: boolean; tokens?: number }): Promise<{ chunks: number; tokens: number; raptor: boolean; graph: boolean }> {
      const doc = await store.documents.byId(ref.documentId);
      if (doc && doc.run_seq === ref.runSeq && doc.run === 'DONE') {
        await blobs.deletePrefix(workPrefix(doc.dataset_id, doc.id, ref.runSeq));
        return { chunks: doc.chunk_count, tokens: doc.token_count, ...(await afterParse(doc)) };
      }
      const current = await currentRun(ref);
      const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
      const vectors = await embed(ref, current, drafts, ref.enriched);
      const stop = keepAlive();
      try {
        const counts = await indexRun(ref, current, drafts, vectors, ref.tokens);
        await blobs.deletePrefix(workPrefix(current.dataset_id, current.id, ref.runSeq));
        return { ...counts, ...(await afterParse(current)) };
      } finally {
        stop();
      }
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

const EMPTY_DOCUMENT: ExtractedDocument = { sections: [], pages: 0, meta: {} };

const extractedMessage = (sections: number, pages: number) => `Extracted ${sections} sections from ${pages} page(s)`;

/** How the document is to be chunked: its chunk method and parser_config. */
function chunkRequest(doc: DocumentRow): ChunkRequest {
  return { method: doc.chunk_method as ChunkMethod, config: JSON.parse(doc.parser_config) as Record<string, unknown> };
}

/** Chunk records built between two turns of the event loop (chunkRecords). */
export const RECORD_SLICE = 2000;

/**
 * The index records of a run's chunks (their images stored first), built a slice at a time with the event
 * loop turning between slices: a book's 145,000 records took ~1 s in one go, the ids' hashes mostly
 * (bench/ingest/large-document.ts --paragraphs 290000 --cpu-prof DIR).
 */
export async function chunkRecords(doc: DocumentRow, runSeq: number, drafts: ChunkDraft[], vectors: number[][], now: number, blobs: BlobStore): Promise<IndexedChunk[]> {
  const createTime = toDateTime(now);
  const chunks: IndexedChunk[] = [];
  for (const [i, d] of drafts.entries()) {
    if (i > 0 && i % RECORD_SLICE === 0) await nextTurn();
    const id = chunkId(doc.id, runSeq, i);
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
      create_time: createTime,
      create_timestamp: now / 1000,
      parent_content: d.parent_content,
      vector: vectors[i],
    });
  }
  return chunks;
}

/** Deterministic per run and position, so a retried index step overwrites instead of duplicating. */
function chunkId(documentId: string, runSeq: number, ordinal: number): string {
  return createHash('sha256').update(`${documentId}:${runSeq}:${ordinal}`).digest('hex').slice(0, 32);
}

/**
 * Heartbeats every `everyMs` (a second unless told) while a long step runs, so a dead worker is noticed and
 * cancels arrive; each carries `details()` when given (shown in the Temporal UI).
 */
function keepAlive(everyMs = 1000, details?: () => unknown): () => void {
  const timer = setInterval(() => heartbeat(details?.()), everyMs);
  return () => clearInterval(timer);
}

/** The run is no longer the document's current one (stopped, deleted, re-parsed): the workflow ends without writing. */
function staleRun(ref: RunRef): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`run ${ref.runSeq} of document ${ref.documentId} is no longer current`, STALE);
}

function throwIfCancelled(): void {
  if (Context.current().cancellationSignal.aborted) throw new CancelledFailure('parsing was cancelled');
}

/** Errors of a file that cannot be read, or that goes over a parsing limit or ceiling: retrying would not help. */
const BAD_INPUT = new Set(['UnsupportedFormatError', 'CorruptFileError', 'ParseLimitError']);

/**
 * A model that refuses the request (wrong key, unknown model: ModelError status 4xx) fails the
 * document at once; an unreachable or failing one is retried by Temporal, with the model named.
 */
function enrichmentFailure(err: unknown, label: string, modelId: string): unknown {
  if (Context.current().cancellationSignal.aborted) return new CancelledFailure('parsing was cancelled');
  const message = `generating ${label} with ${modelId} failed: ${err instanceof Error ? err.message : String(err)}`;
  if (err instanceof ModelError && err.status < 500) return ApplicationFailure.nonRetryable(message, 'ModelRefused');
  return ApplicationFailure.retryable(message, err instanceof Error ? err.name : 'Error');
}

/** Bad input fails the document at once; anything else is retried by Temporal. */
function asFailure(err: unknown): unknown {
  if (err instanceof Error && BAD_INPUT.has(err.name)) return ApplicationFailure.nonRetryable(err.message, err.name);
  if (Context.current().cancellationSignal.aborted) return new CancelledFailure('parsing was cancelled');
  return err;
}

/**
 * A finished parse's progress_msg: RAGFlow's "Task done" first (clients wait for it), then Cairn's figures.
 */
export function doneMessage(chunks: number, tokens: number, seconds: number): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `Task done: ${plural(chunks, 'chunk')}, ${plural(tokens, 'token')} in ${seconds.toFixed(1)} s`;
}
