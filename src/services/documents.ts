import path from 'node:path';
import type { MetaStore } from '../store/index.js';
import type { DocumentPatch, DocumentRow, RunState } from '../store/documents.js';
import type { DatasetRow } from '../store/datasets.js';
import type { ChunkIndex } from '../index/chunks/chunk-index.js';
import type { BlobStore } from '../blobs/types.js';
import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import { newId } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { ServiceUnavailable, badRequest, notFound } from '../errors.js';
import { contentTypeFor, extensionOf, isSupportedFile } from '../parsing/formats.js';
import { deepMerge, defaultParserConfig, mergeParserConfig, type ParserConfigMethod } from '../chunking/parser-config.js';
import { datasetBlobPrefix, documentBlobKey } from './blob-keys.js';
import { partialDeleteTargets, type PartialDelete } from './delete-targets.js';
import type { ListPage } from './paging.js';
import type { IngestRunRef } from '../engine/task-queues.js';
import { stepOutputsPrefix, type PipelineRun } from '../pipelines/run-types.js';
import { ingestionLogs } from './ingestion-logs.js';
import { PipelinePlanError, chunkMethodPlan, pipelinePlan, stepIndex } from '../pipelines/plan.js';
import { keywordSettings } from '../enrichment/keywords.js';
import { DATAFLOW_CANVAS } from '../pipelines/names.js';

/** What an operator reads in the Temporal UI to find a file's run (the workflow's memo): names, not ids. */
export interface ParseLabels {
  document_name: string;
  dataset_name: string;
  /** The ingestion pipeline's title and id, when the dataset ingests through one. */
  pipeline_title?: string;
  pipeline_id?: string;
}

/** A document of a chunk method ingests as the pipeline its method makes (src/pipelines/plan.ts chunkMethodPlan). */
function chunkMethodRun(doc: DocumentRow): PipelineRun {
  const enrich = keywordSettings(JSON.parse(doc.parser_config) as Record<string, unknown>);
  return { id: '', title: `Chunk method ${doc.chunk_method}`, steps: chunkMethodPlan(doc.chunk_method, enrich), fromIndex: 0 };
}

/**
 * Starts and cancels parse runs (the parseDocument workflow). A Temporal that cannot be reached is a
 * ServiceUnavailable (503).
 */
export interface ParseControl {
  startParse(run: IngestRunRef, labels: ParseLabels, pipeline?: PipelineRun): Promise<void>;
  /** Requests the run's cancellation; false when no workflow of the run is open (nobody will mark the document). */
  cancelParse(run: IngestRunRef): Promise<boolean>;
  /** Whether a workflow of the run is open. */
  parseOpen(run: IngestRunRef): Promise<boolean>;
}

export interface UploadedFile {
  name: string;
  bytes: Uint8Array;
}

export interface ListDocumentsInput extends ListPage<'create_time' | 'update_time' | 'name'> {
  keywords?: string;
  run?: RunState[];
  create_time_from?: number;
  create_time_to?: number;
}

export interface UpdateDocumentInput {
  name?: string;
  display_name?: string;
  meta_fields?: Record<string, unknown>;
  chunk_method?: string;
  parser_config?: Record<string, unknown>;
}

const MAX_NAME_BYTES = 255;

/** Where a pass of restartOrphaned stopped: the last row it read. */
export interface OrphanCursor {
  update_time: number;
  id: string;
}

export class DocumentService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetService,
    private readonly index: ChunkIndex,
    private readonly blobs: BlobStore,
    private readonly parsing: ParseControl,
  ) {}

  /** Stores each file as an UNSTART document; a failed file is reported and the others are kept. */
  async upload(p: Principal, datasetId: string, files: UploadedFile[]) {
    const ds = await this.datasets.get(p, datasetId);
    if (files.length === 0) throw badRequest('No file part: send the files in the multipart field `file`');
    const taken = await this.store.documents.names(ds.id);
    const docs: ReturnType<DocumentService['view']>[] = [];
    const errors: { name: string; message: string }[] = [];
    for (const file of files) {
      const problem = checkUpload(file);
      if (problem) {
        errors.push({ name: file.name, message: problem });
        continue;
      }
      const name = uniqueName(file.name, taken);
      taken.add(name.toLowerCase());
      const now = nowMs();
      const id = newId();
      const row: DocumentRow = {
        id,
        dataset_id: ds.id,
        tenant_id: ds.tenant_id,
        name,
        location: documentBlobKey(ds.id, id),
        size: file.bytes.byteLength,
        type: docType(name),
        suffix: extensionOf(name),
        chunk_method: ds.chunk_method,
        parser_config: JSON.stringify(inheritParserConfig(ds)),
        source_type: 'local',
        created_by: p.userId,
        run: 'UNSTART',
        progress: 0,
        progress_msg: '',
        process_begin_at: null,
        process_duration: 0,
        chunk_count: 0,
        token_count: 0,
        meta_fields: '{}',
        run_seq: 0,
        pipeline_id: ds.pipeline_id,
        create_time: now,
        update_time: now,
      };
      await this.blobs.put(row.location, file.bytes);
      await this.store.documents.insert(row);
      docs.push(this.view(row));
    }
    return { docs, errors };
  }

  /** RAGFlow's ingestion logs of a dataset (of one document when given): one log per run, newest first, with its steps. */
  async ingestionLogs(p: Principal, datasetId: string, input: { document_id?: string; page: number; page_size: number }) {
    const ds = await this.datasets.get(p, datasetId);
    const rows = await this.store.ingestionSteps.ofDataset(ds.id, input.document_id);
    const docs = await this.store.documents.byIds(ds.id, [...new Set(rows.map((r) => r.document_id))]);
    const logs = ingestionLogs(rows, new Map(docs.map((d) => [d.id, d])));
    // RAGFlow's paging: 0 means the default.
    const size = input.page_size || 30;
    const start = (Math.max(1, input.page) - 1) * size;
    return { total: logs.length, logs: logs.slice(start, start + size) };
  }

  /** RAGFlow's ingestion summary: the dataset's documents, chunks and tokens, and its documents by run state. */
  async ingestionSummary(p: Principal, datasetId: string) {
    const ds = await this.datasets.get(p, datasetId);
    const totals = (await this.store.documents.totals([ds.id])).get(ds.id)!;
    const status = (await this.store.documents.runCounts([ds.id])).get(ds.id)!;
    return { doc_num: totals.documents, chunk_num: totals.chunks, token_num: totals.tokens, status };
  }

  async list(p: Principal, datasetId: string, input: ListDocumentsInput) {
    const ds = await this.datasets.get(p, datasetId);
    const { total, rows } = await this.store.documents.list({
      datasetId: ds.id,
      id: input.id,
      name: input.name,
      keywords: input.keywords,
      run: input.run,
      createdFrom: input.create_time_from ? input.create_time_from * 1000 : undefined,
      createdTo: input.create_time_to ? input.create_time_to * 1000 + 999 : undefined,
      orderBy: input.orderby,
      desc: input.desc,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    });
    if (input.id && total === 0) throw notFound(`Document '${input.id}' not found in dataset ${ds.id}`);
    return { total, docs: rows.map((r) => this.view(r)) };
  }

  /** A document of a dataset the caller may manage, or 404. */
  async get(p: Principal, datasetId: string, documentId: string): Promise<{ ds: DatasetRow; doc: DocumentRow }> {
    const ds = await this.datasets.get(p, datasetId);
    const doc = await this.store.documents.byId(documentId);
    if (!doc || doc.dataset_id !== ds.id) throw notFound(`Document '${documentId}' not found in dataset ${ds.id}`);
    return { ds, doc };
  }

  /** A dataset the caller may manage (404/403 otherwise). */
  datasetFor(p: Principal, datasetId: string): Promise<DatasetRow> {
    return this.datasets.get(p, datasetId);
  }

  async update(p: Principal, datasetId: string, documentId: string, input: UpdateDocumentInput) {
    const { ds, doc } = await this.get(p, datasetId, documentId);
    const patch: DocumentPatch = { update_time: nowMs() };
    const newName = input.display_name ?? input.name;
    if (newName !== undefined) {
      const name = newName.trim();
      if (!name) throw badRequest('`name` must not be empty');
      if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw badRequest('File name must be 255 bytes or less.');
      if (extensionOf(name) !== extensionOf(doc.name)) throw badRequest(`The extension of a file can't be changed (${doc.name} -> ${name})`);
      // RAGFlow's rename rule compares names exactly: a case variant of a sibling's name is allowed
      // (unlike uploads, which de-duplicate case-insensitively).
      if (name !== doc.name) {
        const { rows } = await this.store.documents.list({ datasetId: ds.id, name, orderBy: 'create_time', desc: false, offset: 0, limit: 1 });
        if (rows.some((r) => r.id !== doc.id && r.name === name)) throw badRequest(`Duplicated document name in the same dataset: ${name}`);
      }
      patch.name = name;
    }
    if (input.meta_fields !== undefined) patch.meta_fields = JSON.stringify(input.meta_fields);
    const methodChanged = input.chunk_method !== undefined && input.chunk_method !== doc.chunk_method;
    if (input.chunk_method !== undefined || input.parser_config !== undefined) {
      const method = (input.chunk_method ?? doc.chunk_method) as ParserConfigMethod;
      const base = methodChanged ? {} : (JSON.parse(doc.parser_config) as Record<string, unknown>);
      patch.chunk_method = method;
      patch.parser_config = JSON.stringify(mergeParserConfig(method, 'document', deepMerge(base, input.parser_config ?? {})));
    }
    if (methodChanged) {
      // A new chunk method invalidates the chunks: stop any run, remove them, back to UNSTART.
      if (doc.run === 'RUNNING') await this.parsing.cancelParse(doc);
      await this.index.deleteByDocument(doc.id);
      Object.assign(patch, { run: 'UNSTART', progress: 0, progress_msg: '', chunk_count: 0, token_count: 0, process_duration: 0, process_begin_at: null, run_seq: doc.run_seq + 1 });
    }
    await this.store.documents.update(doc.id, patch);
    // Chunks carry the document's name (document_name in chunk lists and retrieval): keep them in step.
    if (patch.name !== undefined && patch.name !== doc.name) await this.index.renameDocument(doc.id, patch.name);
    return this.view((await this.store.documents.byId(doc.id))!);
  }

  async download(p: Principal, datasetId: string, documentId: string) {
    const { doc } = await this.get(p, datasetId, documentId);
    const bytes = await this.blobs.get(doc.location);
    if (!bytes) throw notFound(`The file of document ${doc.name} is missing from storage`);
    return { name: doc.name, bytes, contentType: contentTypeFor(doc.name) };
  }

  /** The original file by document id alone (RAGFlow's `GET /documents/{id}`): the dataset's access rules apply. */
  async downloadById(p: Principal, documentId: string) {
    const doc = await this.store.documents.byId(documentId);
    if (!doc) throw notFound(`Document '${documentId}' not found`);
    return this.download(p, doc.dataset_id, documentId);
  }

  /** Partial: valid ids go, unknown or duplicate ones are reported in `errors` (an error only when none goes). Removes chunks, stored files and rows. */
  async delete(p: Principal, datasetId: string, ids: string[] | null | undefined, deleteAll: boolean): Promise<PartialDelete & { deleted: number }> {
    const ds = await this.datasets.get(p, datasetId);
    const byId = new Map<string, DocumentRow>();
    const { targets, errors } = await partialDeleteTargets(
      ids,
      deleteAll,
      async (id) => {
        const doc = await this.store.documents.byId(id);
        if (!doc || doc.dataset_id !== ds.id) throw notFound(`Document ${id} does not belong to dataset ${ds.id} or was not found`);
        byId.set(id, doc);
      },
      async () => {
        const all = await this.store.documents.listByDataset(ds.id);
        for (const d of all) byId.set(d.id, d);
        return all.map((d) => d.id);
      },
    );
    const docs = targets.map((id) => byId.get(id)!);
    for (const doc of docs) {
      if (doc.run === 'RUNNING') await this.parsing.cancelParse(doc);
      // Bump the run number first so that a run still finishing writes nothing back.
      await this.store.documents.update(doc.id, { run_seq: doc.run_seq + 1 });
      await this.index.deleteByDocument(doc.id);
    }
    // Rows go before files: a crash in between leaves an unreferenced file, never a document without
    // its file (and a backup's snapshot never names a file that is already gone).
    await this.store.documents.delete(docs.map((d) => d.id));
    await this.store.ingestionSteps.deleteDocuments(docs.map((d) => d.id));
    for (const doc of docs) {
      await this.blobs.delete(doc.location);
      await this.blobs.deletePrefix(stepOutputsPrefix(datasetBlobPrefix(doc.dataset_id), doc.id));
    }
    return { deleted: docs.length, success_count: docs.length, errors };
  }

  /**
   * Starts parsing; a document already RUNNING is reported and not started twice. Unlike deletes, any
   * unknown id is an error naming them all, and nothing starts (RAGFlow's rule).
   *
   * A document is marked RUNNING before its workflow starts. When the start fails (Temporal unreachable:
   * a 503) the document is put back as it was; a document RUNNING with no open workflow (Cairn died between
   * the two, or the put-back failed too) is started anew rather than refused. So none stays RUNNING for good.
   */
  async parse(p: Principal, datasetId: string, documentIds: string[], options: { fromStep?: string; removeChunks?: boolean } = {}) {
    const ds = await this.datasets.get(p, datasetId);
    const { docs, errors, missing } = await this.resolveForRun(ds.id, documentIds);
    if (missing.length) throw notFound(`Documents not found: ${missing.join(', ')}`);
    const pipeline = await this.pipelineRun(ds, options.fromStep);
    let started = 0;
    const notStarted: unknown[] = [];
    // Starting a workflow is a round trip to Temporal: start them a batch at a time, not one by one.
    await inBatches(docs, 16, async (doc) => {
      const runSeq = await this.beginRun(doc, pipeline?.id ?? null);
      if (runSeq === undefined) {
        errors.push(`Document ${doc.id} is already being parsed`);
        return;
      }
      const err = await this.startRun(ds, doc, runSeq, pipeline, options.removeChunks ?? false);
      if (err === undefined) {
        started++;
      } else {
        notStarted.push(err);
        errors.push(`Document ${doc.id} did not start: ${(err as Error).message}`);
      }
    });
    // Nothing started: the request failed as a whole, with the first failure's status (503 for Temporal down).
    if (started === 0 && notStarted.length) throw notStarted.find((e) => e instanceof ServiceUnavailable) ?? notStarted[0];
    return { success_count: started, errors };
  }

  /**
   * Starts run `runSeq` of the document (already marked RUNNING as it). When the workflow cannot start the
   * document is put back (putBack) and the error returned.
   */
  private async startRun(ds: DatasetRow, doc: DocumentRow, runSeq: number, pipeline: PipelineRun | undefined, removeChunks: boolean): Promise<unknown> {
    const run = { id: doc.id, dataset_id: doc.dataset_id, run_seq: runSeq, pipeline_id: pipeline?.id ?? null };
    const labels = { document_name: doc.name, dataset_name: ds.name, ...(pipeline ? { pipeline_title: pipeline.title, pipeline_id: pipeline.id } : {}) };
    // Once the run is this request's: a document another request is parsing keeps its chunks.
    if (removeChunks) await this.index.deleteByDocument(doc.id);
    try {
      await this.parsing.startParse(run, labels, pipeline ?? chunkMethodRun(doc));
      return undefined;
    } catch (err) {
      await this.putBack(doc, runSeq, err, removeChunks);
      return err;
    }
  }

  /**
   * Parses anew each document still RUNNING with no open workflow whose row has not changed since
   * `updatedBefore` (Cairn died between parse's two writes), as a re-parse would, without waiting for someone
   * to stop or re-parse it; one whose dataset's pipeline is gone ends FAIL with the reason. At most `limit`
   * rows after the cursor `after`; returns what it did and the cursor of the last row read (none: the end).
   * Only old rows: a request between its two writes never is (docs/operations.md, "No document stays RUNNING…").
   */
  async restartOrphaned(updatedBefore: number, limit: number, after?: OrphanCursor): Promise<{ restarted: string[]; failed: string[]; last?: OrphanCursor }> {
    const rows = await this.store.documents.runningUnchangedSince(updatedBefore, limit, after);
    const restarted: string[] = [];
    const failed: string[] = [];
    for (const doc of rows) {
      if (await this.parsing.parseOpen(doc)) continue;
      // A dataset being deleted takes its documents with it.
      const ds = await this.store.datasets.byId(doc.dataset_id);
      if (!ds) continue;
      let pipeline: PipelineRun | undefined;
      try {
        pipeline = await this.pipelineRun(ds);
      } catch (err) {
        const progress_msg = `Failed: parsing was interrupted (Cairn stopped before its workflow started) and could not start again: ${(err as Error).message}`;
        if (await this.store.documents.updateRun(doc.id, doc.run_seq, { run: 'FAIL', progress_msg, update_time: nowMs() }, 'RUNNING')) failed.push(doc.id);
        continue;
      }
      const runSeq = await this.store.documents.takeOverRun(doc.id, nowMs(), pipeline?.id ?? null, doc.run_seq);
      if (runSeq === undefined) continue; // ended, or taken over by someone else, since it was read
      if ((await this.startRun(ds, doc, runSeq, pipeline, false)) === undefined) restarted.push(doc.id);
      else failed.push(doc.id);
    }
    const lastRow = rows.length === limit ? rows[rows.length - 1] : undefined;
    return { restarted, failed, last: lastRow && { update_time: lastRow.update_time, id: lastRow.id } };
  }

  /**
   * Marks the document RUNNING as a new run; one RUNNING with no open workflow is taken over (its run number
   * moves on, so a late start of the old run finds itself stale and writes nothing). Undefined when it is
   * being parsed.
   */
  private async beginRun(doc: DocumentRow, pipelineId: string | null): Promise<number | undefined> {
    const runSeq = await this.store.documents.beginRun(doc.id, nowMs(), pipelineId);
    if (runSeq !== undefined) return runSeq;
    const current = await this.store.documents.byId(doc.id);
    if (!current || current.run !== 'RUNNING' || (await this.parsing.parseOpen(current))) return undefined;
    return this.store.documents.beginRun(doc.id, nowMs(), pipelineId, current.run_seq);
  }

  /**
   * After a workflow that did not start: the document as it was before the request (a parsed document keeps
   * its chunks and DONE), or, when it was a RUNNING one without a workflow or its chunks were removed first
   * (ingest's `delete`), FAIL with the reason. The run number stays moved on: a workflow that started after
   * all (the answer was lost) finds itself stale.
   */
  private async putBack(before: DocumentRow, runSeq: number, err: unknown, chunksRemoved: boolean): Promise<void> {
    const patch: DocumentPatch =
      before.run === 'RUNNING' || chunksRemoved
        ? { run: 'FAIL', progress_msg: `Failed: parsing could not start: ${(err as Error).message}`, ...(chunksRemoved ? { chunk_count: 0, token_count: 0 } : {}) }
        : { run: before.run, progress: before.progress, progress_msg: before.progress_msg, process_begin_at: before.process_begin_at, process_duration: before.process_duration };
    await this.store.documents.updateRun(before.id, runSeq, { ...patch, pipeline_id: before.pipeline_id, update_time: nowMs() }, 'RUNNING');
  }

  /**
   * Stops a RUNNING document's run: its workflow is cancelled and marks it CANCEL. With no open workflow
   * (Cairn died between marking it RUNNING and starting the workflow, or the workflow was ended by hand)
   * nobody else would, so it is marked CANCEL here, as the workflow would have: without partial chunks.
   */
  private async stopRun(doc: DocumentRow): Promise<void> {
    if (await this.parsing.cancelParse(doc)) return;
    const now = nowMs();
    const ended = await this.store.documents.updateRun(
      doc.id,
      doc.run_seq,
      {
        run: 'CANCEL',
        progress_msg: 'Cancelled: parsing was stopped (its workflow was not running); partial chunks were removed',
        chunk_count: 0,
        token_count: 0,
        process_duration: (now - (doc.process_begin_at ?? now)) / 1000,
        update_time: now,
      },
      'RUNNING',
    );
    if (!ended) return;
    await this.index.deleteByDocument(doc.id);
    await this.store.ingestionSteps.endRunning(doc.id, doc.run_seq, 'CANCEL', now, 'parsing was stopped');
  }

  /**
   * The run of the dataset's ingestion pipeline (none for a dataset of a chunk method): its steps as saved
   * now, from `fromStep` (a component id) when a rerun names one. The steps up to the one that stores the
   * chunks can be rerun; a Compiler after the Tokenizer runs again only with them.
   */
  private async pipelineRun(ds: DatasetRow, fromStep?: string): Promise<PipelineRun | undefined> {
    if (!ds.pipeline_id) {
      if (fromStep !== undefined) throw badRequest(`from_step applies to datasets that ingest through a pipeline; dataset '${ds.name}' uses the chunk method ${ds.chunk_method}`);
      return undefined;
    }
    const canvas = await this.store.agents.byId(ds.pipeline_id);
    if (!canvas || canvas.canvas_category !== DATAFLOW_CANVAS) {
      throw badRequest(`The ingestion pipeline ${ds.pipeline_id} of dataset '${ds.name}' no longer exists: choose another with PUT /api/v1/datasets/${ds.id} (pipeline_id)`);
    }
    try {
      const steps = pipelinePlan(JSON.parse(canvas.dsl) as Record<string, unknown>);
      const fromIndex = fromStep === undefined ? 0 : stepIndex(steps, fromStep);
      const storing = steps.findIndex((s) => s.component === 'Tokenizer' || s.component === 'Compiler');
      if (fromIndex > storing) throw new PipelinePlanError(`step '${fromStep}' comes after '${steps[storing]!.id}' stored the chunks: rerun from '${steps[storing]!.id}' or an earlier step`);
      return { id: canvas.id, title: canvas.title, steps, fromIndex };
    } catch (err) {
      if (err instanceof PipelinePlanError) throw badRequest(`Pipeline '${canvas.title}' cannot run: ${err.message}`);
      throw err;
    }
  }

  /**
   * RAGFlow's POST /documents/ingest: run "1" starts the documents' ingestion (their datasets may differ),
   * `delete` first removing their chunks; run "2" cancels it, and every document must be RUNNING (nothing is
   * cancelled otherwise). Unknown or foreign ids are an error naming them, and nothing starts.
   */
  async ingest(p: Principal, input: { docIds: string[]; run: '1' | '2' | 1 | 2; delete: boolean; fromStep?: string }) {
    const byDataset = new Map<string, DocumentRow[]>();
    const unknown: string[] = [];
    for (const id of [...new Set(input.docIds)]) {
      const doc = await this.store.documents.byId(id);
      const ds = doc && (await this.datasets.get(p, doc.dataset_id).catch(() => undefined));
      if (!doc || !ds) {
        unknown.push(id);
        continue;
      }
      byDataset.set(ds.id, [...(byDataset.get(ds.id) ?? []), doc]);
    }
    if (unknown.length) throw notFound(`Documents not found: ${unknown.join(', ')}`);
    const docs = [...byDataset.values()].flat();
    if (String(input.run) === '2') {
      const idle = docs.filter((d) => d.run !== 'RUNNING');
      if (idle.length) throw badRequest(`Cannot cancel a task that is not in RUNNING status: ${idle.map((d) => `${d.id} is ${d.run}`).join(', ')}`);
      for (const doc of docs) await this.stopRun(doc);
      return;
    }
    // A RUNNING document without a workflow is not being processed: parse takes it over.
    const running = [];
    for (const doc of docs) if (doc.run === 'RUNNING' && (await this.parsing.parseOpen(doc))) running.push(doc);
    if (running.length) throw badRequest(`Can't ingest documents that are being processed: ${running.map((d) => d.id).join(', ')} (cancel them first with run "2")`);
    for (const [datasetId, group] of byDataset) {
      await this.parse(p, datasetId, group.map((d) => d.id), { fromStep: input.fromStep, removeChunks: input.delete });
    }
  }

  /** Cancels running parses; a document that is not running is reported. */
  async stop(p: Principal, datasetId: string, documentIds: string[]) {
    const ds = await this.datasets.get(p, datasetId);
    const { docs, errors } = await this.resolveForRun(ds.id, documentIds);
    let stopped = 0;
    for (const doc of docs) {
      if (doc.run !== 'RUNNING') {
        errors.push(`Can't stop parsing document ${doc.id}: it is ${doc.run}, not RUNNING`);
        continue;
      }
      await this.stopRun(doc);
      stopped++;
    }
    return { success_count: stopped, errors };
  }

  private async resolveForRun(datasetId: string, ids: string[]) {
    if (!Array.isArray(ids) || ids.length === 0) throw badRequest('`document_ids` is required');
    const errors: string[] = [];
    const unique = [...new Set(ids)];
    if (unique.length !== ids.length) errors.push(`Duplicate document ids: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);
    const docs = await this.store.documents.byIds(datasetId, unique);
    const missing = unique.filter((id) => !docs.some((d) => d.id === id));
    if (missing.length === unique.length) throw notFound(`Documents not found: ${missing.join(', ')}`);
    if (missing.length) errors.push(`Documents not found: ${missing.join(', ')}`);
    return { docs, errors, missing };
  }

  view(row: DocumentRow) {
    return {
      id: row.id,
      name: row.name,
      thumbnail: null,
      dataset_id: row.dataset_id,
      chunk_method: row.chunk_method,
      parser_config: JSON.parse(row.parser_config),
      source_type: row.source_type,
      type: row.type,
      suffix: row.suffix,
      created_by: row.created_by,
      size: row.size,
      token_count: row.token_count,
      chunk_count: row.chunk_count,
      progress: row.progress,
      progress_msg: row.progress_msg,
      process_begin_at: row.process_begin_at === null ? null : toHttpDate(row.process_begin_at),
      process_duration: row.process_duration,
      run: row.run,
      status: '1',
      meta_fields: JSON.parse(row.meta_fields),
      create_time: toSeconds(row.create_time),
      create_date: toHttpDate(row.create_time),
      update_time: toSeconds(row.update_time),
      update_date: toHttpDate(row.update_time),
    };
  }
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

function checkUpload(file: UploadedFile): string | undefined {
  if (!file.name) return 'No file selected: the file has no name';
  if (Buffer.byteLength(file.name) > MAX_NAME_BYTES) return 'File name must be 255 bytes or less.';
  if (!isSupportedFile(file.name)) return `This type of file has not been supported yet: ${extensionOf(file.name) || '(no extension)'}`;
  return undefined;
}

/** "report.pdf" -> "report(1).pdf" when the name is taken in the dataset (case-insensitive). */
function uniqueName(name: string, taken: Set<string>): string {
  if (!taken.has(name.toLowerCase())) return name;
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 1; ; i++) {
    const candidate = `${stem}(${i})${ext}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

function docType(name: string): string {
  const ext = extensionOf(name);
  if (ext === 'pdf') return 'pdf';
  if (['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tif', 'tiff', 'webp'].includes(ext)) return 'visual';
  return 'doc';
}

/**
 * A new document takes the document-level defaults of the dataset's chunk method, overridden by what
 * the dataset customised (values that differ from the dataset-level defaults).
 */
export function inheritParserConfig(ds: DatasetRow): Record<string, unknown> {
  const method = ds.chunk_method as ParserConfigMethod;
  const datasetDefaults = defaultParserConfig(method, 'dataset');
  const current = JSON.parse(ds.parser_config) as Record<string, unknown>;
  const customised: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(current)) {
    if (JSON.stringify(v) !== JSON.stringify(datasetDefaults[k])) customised[k] = v;
  }
  return mergeParserConfig(method, 'document', customised);
}
