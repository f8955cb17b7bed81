import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from '../deps.js';
import type { DocumentRow } from '../../src/store/documents.js';
import type { ExtractedDocument } from '../../src/parsing/types.js';
import { datasetBlobPrefix } from '../../src/services/blob-keys.js';
import { draftTokens } from '../../src/chunking/chunk-file.js';
import { cachedCalls } from '../../src/enrichment/cached-calls.js';
import { ModelError } from '../../src/models/types.js';
import { nowMs } from '../../src/time.js';
import { tokenChunk, titleChunk } from '../../src/pipelines/chunkers.js';
import { documentMetadata, extractorCall, tokenizerText, withAnswer, type PipelineChunk } from '../../src/pipelines/extractor.js';
import { setupFor, unsupportedSetup } from '../../src/pipelines/parser-setup.js';
import { PipelinePlanError } from '../../src/pipelines/plan.js';
import { stepOutputKey, type PipelineStepInput, type PipelineStepOutput } from '../../src/pipelines/run-types.js';
import { readJson, workPrefix, writeJson } from '../work-files.js';
import { STALE, asFailure, keepAlive, staleRun, type RunGuard, type RunRef } from './run.js';
import type { extractActivities, FileParser } from './extract.js';
import type { ChunkEmbedder } from './embed.js';
import type { DocumentIndexer, indexActivities } from './index-chunks.js';
import type { enrichActivities } from './enrich.js';

type Deps = Pick<ActivityDeps, 'store' | 'blobs' | 'models' | 'parsers' | 'enrichConcurrency'>;

/** Step i of n reports progress in its own share of the run, so the document's progress only goes up. */
function stepBand(input: PipelineStepInput): [number, number] {
  const from = 0.02 + (0.98 * input.index) / input.total;
  return [from, 0.02 + (0.98 * (input.index + 1)) / input.total];
}

/** A run-time error of the pipeline as drawn (a format it has no setup for...): retrying would not help. */
function planFailure(err: unknown): unknown {
  if (err instanceof PipelinePlanError) return ApplicationFailure.nonRetryable(err.message, err.name);
  return err;
}

/**
 * The steps of an ingestion pipeline (src/pipelines/), one activity for every component, each reading the
 * output the step before it stored and storing its own (kept per document, so a rerun can start from a later
 * step). Every step checks its run is still current, writes its log row as it starts and ends (the ingestion
 * logs), and reports progress in its share of the run.
 */
/** The built-in steps a chunk method's run calls (chunkMethodPlan): the activities of parsing by chunk method. */
type ChunkMethodSteps = ReturnType<typeof extractActivities> & ReturnType<typeof enrichActivities> & ReturnType<typeof indexActivities>;

export function pipelineActivities(deps: Deps, guard: RunGuard, parts: { parseFile: FileParser; embed: ChunkEmbedder; indexer: DocumentIndexer; chunkMethod: ChunkMethodSteps }) {
  const { parseFile, embed, indexer, chunkMethod } = parts;
  const { store, blobs, models, parsers, enrichConcurrency } = deps;
  const { currentRun, watchRun, report } = guard;

  const outputKey = (input: PipelineStepInput) => stepOutputKey(datasetBlobPrefix(input.datasetId), input.documentId, input.index, input.step.id);

  /** What the step before this one stored: a missing one (a rerun from a step never reached) is said plainly. */
  async function previousOutput<T>(input: PipelineStepInput, previousId: string | undefined): Promise<T> {
    const key = input.inputKey ?? stepOutputKey(datasetBlobPrefix(input.datasetId), input.documentId, input.index - 1, previousId ?? '');
    if (!(await blobs.get(key))) {
      throw ApplicationFailure.nonRetryable(`step '${input.step.id}' needs the output of step '${previousId}', which no earlier run of this document stored: run the pipeline from its first step`, 'MissingStepOutput');
    }
    return readJson<T>(blobs, key);
  }

  async function parserStep(input: PipelineStepInput, ref: RunRef, doc: DocumentRow): Promise<PipelineStepOutput> {
    const setup = setupFor(input.step.id, input.step.params, doc.name);
    const unsupported = unsupportedSetup(input.step.id, setup);
    if (unsupported) throw new PipelinePlanError(unsupported);
    const empty: ExtractedDocument = { sections: [], pages: 0, meta: {} };
    const extracted = await parseFile(ref, doc, (bytes, options) => parsers.extract(bytes, doc.name, options), () => empty, stepBand(input));
    await writeJson(blobs, outputKey(input), extracted);
    return { counts: { pages: extracted.pages, sections: extracted.sections.length }, outputKey: outputKey(input) };
  }

  async function chunkerStep(input: PipelineStepInput, doc: DocumentRow, previousId: string): Promise<PipelineStepOutput> {
    const parsed = await previousOutput<ExtractedDocument>(input, previousId);
    const chunks: PipelineChunk[] = input.step.component === 'TitleChunker' ? titleChunk(parsed, input.step.params) : tokenChunk(parsed, input.step.params, doc.name);
    await writeJson(blobs, outputKey(input), chunks);
    return { counts: { chunks: chunks.length, tokens: draftTokens(chunks) }, outputKey: outputKey(input) };
  }

  async function extractorStep(input: PipelineStepInput, ref: RunRef, doc: DocumentRow, previousId: string): Promise<PipelineStepOutput> {
    const chunks = await previousOutput<PipelineChunk[]>(input, previousId);
    const field = String(input.step.params.field_name);
    if (field === 'toc') throw new PipelinePlanError(`Extractor '${input.step.id}': a table of contents (field_name "toc") is not built by Cairn: use a TitleChunker to chunk by headings`);
    const llmId = typeof input.step.params.llm_id === 'string' && input.step.params.llm_id ? input.step.params.llm_id : null;
    const model = await models.chat(doc.tenant_id, llmId).catch((err: Error) => {
      throw ApplicationFailure.nonRetryable(`Extractor '${input.step.id}' needs a chat model (its llm_id, or the default chat model): ${err.message}`, 'NoChatModel');
    });
    const [from, to] = stepBand(input);
    const withText = chunks.map((c, i) => ({ c, i })).filter(({ c }) => c.content.trim());
    await report(ref, from, `${input.step.id}: writing ${field} for 0/${withText.length} chunks`);
    const run = watchRun(ref);
    const stop = keepAlive();
    let done = 0;
    let modelCalls = 0;
    let cached = 0;
    try {
      const results = await cachedCalls(store.enrichment, model, withText.map(({ c }) => extractorCall(input.step.params, input.step.id, c)), {
        tenantId: doc.tenant_id,
        concurrency: enrichConcurrency,
        signal: run.signal,
        onResult: (r) => {
          done++;
          if (r.cached) cached++;
          else modelCalls++;
          heartbeat({ done });
          void report(ref, from + ((to - from) * done) / Math.max(1, withText.length), `${input.step.id}: writing ${field} for ${done}/${withText.length} chunks`);
        },
      });
      const out = [...chunks];
      withText.forEach(({ i }, j) => (out[i] = withAnswer(out[i]!, field, results[j]!.text)));
      await writeJson(blobs, outputKey(input), out);
      return { counts: { chunks: out.length, model_calls: modelCalls, cached_calls: cached }, outputKey: outputKey(input) };
    } catch (err) {
      if (run.stale()) throw staleRun(ref);
      if (Context.current().cancellationSignal.aborted) throw new CancelledFailure('parsing was cancelled');
      const message = `Extractor '${input.step.id}' with ${model.id} failed: ${err instanceof Error ? err.message : String(err)}`;
      if (err instanceof ModelError && err.status < 500) throw ApplicationFailure.nonRetryable(message, 'ModelRefused');
      throw ApplicationFailure.retryable(message, err instanceof Error ? err.name : 'Error');
    } finally {
      run.stop();
      stop();
    }
  }

  /**
   * The chunks go to the index and the run is DONE. What is embedded is the Tokenizer's `fields`; its
   * filename_embd_weight is the file name's share of each vector. Without "embedding" in search_method a
   * chunk gets no meaning vector (all zeros: vector search never ranks it, words find it). A chunk with a
   * summary is matched by its summary and returns its text (RAGFlow searches the summary's words in place of
   * the text's), the text kept as the chunk's parent content.
   */
  async function indexStep(input: PipelineStepInput, ref: RunRef, doc: DocumentRow, previousId: string, params: Record<string, unknown>): Promise<PipelineStepOutput> {
    const chunks = await previousOutput<PipelineChunk[]>(input, previousId);
    const fields = typeof params.fields === 'string' ? [params.fields] : Array.isArray(params.fields) ? params.fields.filter((f): f is string => typeof f === 'string') : ['text'];
    const methods = Array.isArray(params.search_method) ? params.search_method.map((m) => String(m).toLowerCase()) : ['full_text', 'embedding'];
    if (!methods.includes('full_text')) throw new PipelinePlanError(`Tokenizer '${input.step.id}': search_method without full_text is not supported: Cairn always indexes a chunk's words (add full_text)`);
    const weight = params.filename_embd_weight === undefined ? undefined : Number(params.filename_embd_weight);
    const [from, to] = stepBand(input);
    const embedBand = [from, from + (to - from) * 0.9] as const;
    let vectors: number[][];
    if (methods.includes('embedding')) {
      vectors = await embed(ref, doc, chunks.map((c) => ({ content: tokenizerText(c, fields) })), false, { band: embedBand, titleWeight: weight });
    } else {
      const dims = chunks.length ? (await models.embedding(doc.tenant_id, (await store.datasets.byId(doc.dataset_id))?.embedding_model ?? '').then((m) => m.embed([doc.name])))[0]!.length : 0;
      vectors = chunks.map(() => new Array<number>(dims).fill(0));
    }
    const drafts = chunks.map(({ summary, metadata: _m, fields: _f, ...draft }) => (summary ? { ...draft, content: summary, parent_content: draft.parent_content ?? draft.content } : draft));
    const facts = documentMetadata(chunks);
    if (Object.keys(facts).length) {
      const meta = { ...(JSON.parse(doc.meta_fields) as Record<string, unknown>), ...facts };
      await store.documents.update(doc.id, { meta_fields: JSON.stringify(meta) });
    }
    const stop = keepAlive();
    try {
      const counted = await indexer.indexRun(ref, doc, drafts, vectors, draftTokens(chunks));
      await blobs.deletePrefix(workPrefix(doc.dataset_id, doc.id, ref.runSeq));
      return { counts: { chunks: counted.chunks, tokens: counted.tokens, metadata_keys: Object.keys(facts).length }, indexed: counted };
    } finally {
      stop();
    }
  }

  /** The work file a chunk method's step reads: the previous step's, handed on by the workflow. */
  function inputKeyOf(input: PipelineStepInput): string {
    if (!input.inputKey) throw ApplicationFailure.nonRetryable(`step '${input.step.id}' runs after the chunk method's first step, in the same run`, 'PipelinePlanError');
    return input.inputKey;
  }

  /** The document, if this run is its current one, RUNNING or (a retried Index step) DONE already; otherwise a StaleRun. */
  async function runOrDone(ref: RunRef): Promise<DocumentRow> {
    const doc = await store.documents.byId(ref.documentId);
    if (!doc || doc.run_seq !== ref.runSeq || (doc.run !== 'RUNNING' && doc.run !== 'DONE')) throw staleRun(ref);
    return doc;
  }

  /** The document, if this run is its current one and DONE; otherwise a StaleRun. */
  async function finishedRun(ref: RunRef): Promise<DocumentRow> {
    const doc = await store.documents.byId(ref.documentId);
    if (!doc || doc.run_seq !== ref.runSeq || doc.run !== 'DONE') throw staleRun(ref);
    return doc;
  }

  return {
    /**
     * Runs one step of a pipeline on one document. `previousId`: the id of the step before (whose stored output
     * this step reads), absent for the first. A Compiler after a chunker stores the chunks as a default Tokenizer would.
     */
    async runPipelineStep(input: PipelineStepInput & { previousId?: string; previousComponent?: string }): Promise<PipelineStepOutput> {
      const ref: RunRef = { documentId: input.documentId, runSeq: input.runSeq };
      // A Compiler after the Tokenizer runs on a run that is DONE already.
      const afterIndex = input.previousComponent === 'Tokenizer' || input.previousComponent === 'Compiler' || input.previousComponent === 'Index';
      // A retried storing step whose first attempt marked the run DONE answers with its counts (the index write is done).
      const storing = !afterIndex && (input.step.component === 'Tokenizer' || input.step.component === 'Compiler');
      const done = storing ? await store.documents.byId(ref.documentId) : undefined;
      if (done && done.run_seq === ref.runSeq && done.run === 'DONE') {
        const counts = { chunks: done.chunk_count, tokens: done.token_count };
        return { counts, indexed: counts };
      }
      const doc = afterIndex ? await finishedRun(ref) : input.step.component === 'Index' ? await runOrDone(ref) : await currentRun(ref);
      const stepRef = { documentId: doc.id, runSeq: ref.runSeq, stepIndex: input.index };
      await store.ingestionSteps.begin({
        document_id: doc.id,
        run_seq: ref.runSeq,
        step_index: input.index,
        tenant_id: doc.tenant_id,
        dataset_id: doc.dataset_id,
        pipeline_id: input.pipelineId || null,
        component_id: input.step.id,
        component_name: input.step.component,
        begin_at: nowMs(),
      });
      // A chunk method's steps report in the bands parsing always has (run.ts BANDS).
      const ownSteps = input.step.component === 'ChunkMethod' || input.step.component === 'Enrichment' || input.step.component === 'Index';
      if (!afterIndex && !ownSteps) await report(ref, stepBand(input)[0], `${input.step.id}: started`);
      const previousId = input.previousId ?? '';
      try {
        let out: PipelineStepOutput;
        switch (input.step.component) {
          case 'Parser':
            out = await parserStep(input, ref, doc);
            break;
          case 'TokenChunker':
          case 'TitleChunker':
            out = await chunkerStep(input, doc, previousId);
            break;
          case 'Extractor':
            out = await extractorStep(input, ref, doc, previousId);
            break;
          case 'Tokenizer':
            out = await indexStep(input, ref, doc, previousId, input.step.params);
            break;
          case 'Compiler':
            out = await compilerStep(input, ref, doc, previousId);
            break;
          case 'ChunkMethod': {
            const chunked = await chunkMethod.extractAndChunk(ref);
            out = { counts: { pages: chunked.pages, sections: chunked.sections, chunks: chunked.chunks, tokens: chunked.tokens }, outputKey: chunked.chunksKey };
            break;
          }
          case 'Enrichment': {
            const enrich = { keywords: Number(input.step.params.keywords) || 0, questions: Number(input.step.params.questions) || 0 };
            const enriched = await chunkMethod.enrichChunks({ ...ref, chunksKey: inputKeyOf(input), enrich });
            const p = enriched.progress;
            out = { counts: p ? { chunks: p.total, model_calls: p.model_calls, cached_calls: p.cached_calls, tokens: p.tokens } : {}, outputKey: enriched.chunksKey };
            break;
          }
          case 'Index': {
            const done = await chunkMethod.embedAndIndex({ ...ref, chunksKey: inputKeyOf(input), enriched: input.step.params.enriched === true });
            out = { counts: { chunks: done.chunks, tokens: done.tokens }, indexed: { chunks: done.chunks, tokens: done.tokens }, after: { raptor: done.raptor, graph: done.graph } };
            break;
          }
          default:
            throw new PipelinePlanError(`Component '${input.step.id}' (${input.step.component}) is not a step`);
        }
        await store.ingestionSteps.end(stepRef, 'DONE', nowMs(), { ...out.counts, ...(out.notes ? { notes: out.notes } : {}) });
        return out;
      } catch (err) {
        const failure = planFailure(asFailure(err));
        const stale = failure instanceof ApplicationFailure && failure.type === STALE;
        const cancelled = failure instanceof CancelledFailure;
        // A stopped or superseded run's step ends CANCEL (a retried attempt would set it RUNNING again), a failed one FAIL.
        if (stale || cancelled) await store.ingestionSteps.end(stepRef, 'CANCEL', nowMs(), {}, stale ? 'the run was stopped or replaced by a newer run' : 'parsing was stopped');
        else await store.ingestionSteps.end(stepRef, 'FAIL', nowMs(), {}, failure instanceof Error ? failure.message : String(failure));
        throw failure;
      }
    },
  };

  /**
   * RAGFlow 0.27's knowledge compilation, as far as Cairn builds it: the chunks are stored (when no Tokenizer
   * did), then the dataset's RAPTOR summaries and knowledge graph are built over them (the workflow starts both
   * jobs after this step). Compilation template groups (wiki pages, skills, structure graphs) are not built:
   * the step's notes say so.
   */
  async function compilerStep(input: PipelineStepInput & { previousComponent?: string }, ref: RunRef, doc: DocumentRow, previousId: string): Promise<PipelineStepOutput> {
    const notes: string[] = [];
    const groups = [input.step.params.compilation_template_group_id, input.step.params.compilation_template_group_ids].flat().filter((g) => typeof g === 'string' && g);
    if (groups.length) notes.push(`compilation template groups (${groups.join(', ')}) are not built by Cairn: it builds RAPTOR summaries and the knowledge graph`);
    if (input.previousComponent === 'Tokenizer' || input.previousComponent === 'Compiler') return { counts: { chunks: doc.chunk_count }, notes };
    const out = await indexStep(input, ref, doc, previousId, { ...input.step.params, fields: 'text', search_method: ['full_text', 'embedding'] });
    return { ...out, notes };
  }
}
