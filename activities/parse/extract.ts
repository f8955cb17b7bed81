import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../deps.js';
import type { DocumentRow } from '../../src/store/documents.js';
import type { ExtractedDocument } from '../../src/parsing/types.js';
import type { ExtractOptions } from '../../src/parsing/extractor.js';
import type { ChunkMethod } from '../../src/chunking/index.js';
import { chunkFile, encodeChunks, type ChunkRequest, type EncodedChunks } from '../../src/chunking/chunk-file.js';
import { keywordSettings, type KeywordSettings } from '../../src/enrichment/keywords.js';
import { readJson, workPrefix, writeJson } from '../work-files.js';
import { pageCheckpoints } from './page-checkpoints.js';
import { BANDS, asFailure, keepAlive, throwIfCancelled, type RunGuard, type RunRef } from './run.js';

/** A document split into chunks: the chunks' work file, their counts, and the enrichment asked for. */
export interface ChunkedRun {
  chunksKey: string;
  chunks: number;
  tokens: number;
  enrich: KeywordSettings;
}

const EMPTY_DOCUMENT: ExtractedDocument = { sections: [], pages: 0, meta: {} };

const extractedMessage = (sections: number, pages: number) => `Extracted ${sections} sections from ${pages} page(s)`;

/** How the document is to be chunked: its chunk method and parser_config. */
function chunkRequest(doc: DocumentRow): ChunkRequest {
  return { method: doc.chunk_method as ChunkMethod, config: JSON.parse(doc.parser_config) as Record<string, unknown> };
}

/** Reads a document's file in a parser process, with progress in `band` (the extract band unless told). */
export type FileParser = ReturnType<typeof fileParser>;

export function fileParser({ blobs, parsers }: Pick<ActivityDeps, 'blobs' | 'parsers'>, { report }: Pick<RunGuard, 'report'>) {
  /**
   * `parse` run on the document's file (in a parser process), with progress reported in the extract band; an
   * empty file is a document with nothing in it (zero chunks, DONE), as in RAGFlow, not a corrupt one: `empty` answers it.
   * The file is read only once its tenant's turn comes (round robin across tenants, docs/parsing-limits.md): until
   * then the document stays "Queued for parsing". A long PDF's finished page ranges are stored as work files, so a
   * retried attempt resumes after the last one.
   */
  return async function parseFile<T>(ref: RunRef, doc: DocumentRow, parse: (bytes: Uint8Array, options: ExtractOptions) => Promise<T>, empty: () => T, band: readonly [number, number] = BANDS.extract): Promise<T> {
    const [from, to] = band;
    const ctx = Context.current();
    let last = 0;
    const stop = keepAlive();
    let release: (() => void) | undefined;
    try {
      release = await parsers.admit(doc.tenant_id, ctx.cancellationSignal);
      await report(ref, from, `Reading ${doc.name}`);
      const bytes = await blobs.get(doc.location);
      if (!bytes) throw ApplicationFailure.nonRetryable(`the file of ${doc.name} is missing from storage`, 'MissingFile');
      const checkpoints = await pageCheckpoints(blobs, workPrefix(doc.dataset_id, doc.id, ref.runSeq));
      if (checkpoints.done.length > 0) await report(ref, from, `Resuming ${doc.name} after page ${Math.max(...checkpoints.done.map((r) => r.to))}`);
      const result = bytes.byteLength === 0 ? empty() : await parse(bytes, {
        signal: ctx.cancellationSignal,
        checkpoints,
        onProgress: (fraction, message) => {
          heartbeat({ fraction });
          if (Date.now() - last > 500) {
            last = Date.now();
            void report(ref, from + (to - from) * fraction, message);
          }
        },
      });
      // Nothing written after the run's work files are removed: the last ranges are stored before the step ends.
      await checkpoints.flushed();
      throwIfCancelled();
      return result;
    } catch (err) {
      throw asFailure(err);
    } finally {
      release?.();
      stop();
    }
  };
}

/** The first step: the file read in a parser process, extracted and split into chunks saved as a work file. */
export function extractActivities({ blobs, parsers }: Pick<ActivityDeps, 'blobs' | 'parsers'>, { currentRun, report }: RunGuard) {
  const parseFile = fileParser({ blobs, parsers }, { report });
  /** The chunks go to a work file, as encoded, for the steps after; `config` is the document's parser_config. */
  async function saveChunks(ref: RunRef, doc: DocumentRow, { draftsJson, chunks, tokens }: EncodedChunks, config: ChunkRequest['config']): Promise<ChunkedRun> {
    const chunksKey = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/chunks.json`;
    await blobs.put(chunksKey, Buffer.from(draftsJson));
    await report(ref, BANDS.chunk[1], `Split into ${chunks} chunks (${tokens} tokens)`);
    return { chunksKey, chunks, tokens, enrich: keywordSettings(config) };
  }

  return {
    /** Extraction alone, for runs started before extraction and chunking were one step. */
    async extractDocument(ref: RunRef): Promise<{ sectionsKey: string; pages: number; sections: number }> {
      const doc = await currentRun(ref);
      const extracted = await parseFile(ref, doc, (bytes, options) => parsers.extract(bytes, doc.name, options), () => EMPTY_DOCUMENT);
      await report(ref, BANDS.extract[1], extractedMessage(extracted.sections.length, extracted.pages));
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
  };
}
