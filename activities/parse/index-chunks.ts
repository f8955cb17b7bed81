import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../deps.js';
import type { BlobStore } from '../../src/blobs/types.js';
import type { DocumentRow } from '../../src/store/documents.js';
import type { ChunkDraft } from '../../src/chunking/types.js';
import type { IndexedChunk } from '../../src/index/chunks/chunk-index.js';
import { draftTokens } from '../../src/chunking/chunk-file.js';
import { chunkImageKey } from '../../src/services/blob-keys.js';
import { nowMs, toDateTime } from '../../src/time.js';
import { nextTurn } from '../../src/batching.js';
import { raptorEnabled } from '../../src/enrichment/raptor/settings.js';
import { graphSettings } from '../../src/enrichment/graph/settings.js';
import { readJson, readVectors, workPrefix } from '../work-files.js';
import { STALE, keepAlive, type RunGuard, type RunRef } from './run.js';
import type { ChunkEmbedder } from './embed.js';

/** Writes a run's chunks to the index and ends the run DONE (the built-in steps and the pipeline's Tokenizer). */
export type DocumentIndexer = ReturnType<typeof documentIndexer>;

export function documentIndexer({ store, index, blobs }: Pick<ActivityDeps, 'store' | 'index' | 'blobs'>) {
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

  return { indexRun, afterParse };
}

/** The last step: the run's chunks replace the document's in the index, and the document is DONE. */
export function indexActivities({ store, index, blobs }: Pick<ActivityDeps, 'store' | 'index' | 'blobs'>, { currentRun }: RunGuard, embed: ChunkEmbedder) {
  const { indexRun, afterParse } = documentIndexer({ store, index, blobs });
  return {
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
  };
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
 * A finished parse's progress_msg: RAGFlow's "Task done" first (clients wait for it), then Cairn's figures.
 */
export function doneMessage(chunks: number, tokens: number, seconds: number): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `Task done: ${plural(chunks, 'chunk')}, ${plural(tokens, 'token')} in ${seconds.toFixed(1)} s`;
}
