import type { MetaStore } from '../store/index.js';
import { firstFreeName } from './unique-name.js';
import type { DatasetPatch, DatasetRow } from '../store/datasets.js';
import type { Principal } from './auth.js';
import type { ModelCatalog } from './model-catalog.js';
import { newId } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { storeDatasetAccess, type DatasetAccess } from './access.js';
import { deleteTargets } from './delete-targets.js';
import { deepMerge, mergeParserConfig, type ParserConfigMethod } from '../chunking/parser-config.js';
import type { ListPage } from './paging.js';
import { DATASET_INDEX_TYPES } from '../store/enrichment.js';
import type { DatasetIndexControl } from './dataset-indexes.js';
import { DATAFLOW_CANVAS } from '../pipelines/names.js';
import type { IngestRunRef } from '../engine/task-queues.js';

/** Chunk methods a dataset may be created with (spec); update additionally allows `tag`. */
export const DATASET_CHUNK_METHODS = ['naive', 'manual', 'qa', 'table', 'paper', 'book', 'laws', 'presentation', 'picture', 'one', 'email'] as const;
export const DATASET_UPDATE_CHUNK_METHODS = [...DATASET_CHUNK_METHODS, 'tag'] as const;

export interface CreateDatasetInput {
  name: string;
  avatar?: string | null;
  description?: string | null;
  embedding_model?: string | null;
  permission?: 'me' | 'team';
  chunk_method?: string;
  parser_config?: Record<string, unknown> | null;
  /** An ingestion pipeline (a dataflow canvas) instead of a chunk method, with RAGFlow's parse_type. */
  pipeline_id?: string | null;
  parse_type?: number | null;
}

export interface UpdateDatasetInput extends Partial<CreateDatasetInput> {
  pagerank?: number;
  language?: string;
}

export interface ListDatasetsInput extends ListPage<'create_time' | 'update_time'> {
  keywords?: string;
  include_parsing_status?: boolean;
}

/**
 * Starts the durable removal of datasets' content (the deleteDatasets workflow) and stops what works on
 * them: parse runs, RAPTOR and graph jobs.
 */
export interface DatasetCleanup extends Pick<DatasetIndexControl, 'cancelDatasetIndex' | 'waitDatasetIndex'> {
  startDeleteDatasets(datasetIds: string[]): Promise<void>;
  /** Whether a workflow was there to cancel does not matter here: the documents go with the dataset. */
  cancelParse(run: IngestRunRef): Promise<unknown>;
}

export interface HandOffOptions {
  /** Told when a deletion could not be handed to its workflow (it is handed off again at the next start). */
  onFailure?: (err: unknown, datasetIds: string[]) => void;
  /** Waits before each new try of a failed hand-off. */
  retriesMs?: number[];
  /** How long the removal waits for cancelled RAPTOR / graph jobs to stop (they check for the dataset before writing anyway). */
  indexJobStopMs?: number;
}

export class DatasetService {
  constructor(
    private readonly store: MetaStore,
    private readonly models: ModelCatalog,
    private readonly cleanup: DatasetCleanup,
    private readonly handOffOptions: HandOffOptions = {},
  ) {
    this.access = storeDatasetAccess(store.datasets);
  }

  private readonly access: DatasetAccess;

  async create(p: Principal, input: CreateDatasetInput) {
    const name = checkName(input.name);
    const pipeline = await this.pipelineChoice(p, input);
    const chunkMethod = input.chunk_method ?? 'naive';
    checkNotBlankModel(input.embedding_model);
    const embeddingModel = input.embedding_model?.trim()
      ? await this.models.checkEmbeddingModel(p.tenantId, input.embedding_model.trim())
      : await this.models.defaultEmbeddingModel(p.tenantId);
    const now = nowMs();
    const row: DatasetRow = {
      id: newId(),
      tenant_id: p.tenantId,
      created_by: p.userId,
      name: await this.uniqueName(p.tenantId, name),
      name_key: '',
      avatar: checkAvatar(input.avatar),
      description: input.description ?? null,
      embedding_model: embeddingModel,
      permission: input.permission ?? 'me',
      chunk_method: chunkMethod,
      parser_config: JSON.stringify(mergeParserConfig(chunkMethod as ParserConfigMethod, 'dataset', checkParserConfigSize(input.parser_config))),
      pagerank: 0,
      language: 'English',
      status: 'active',
      pipeline_id: pipeline?.pipeline_id ?? null,
      parse_type: pipeline?.parse_type ?? null,
      create_time: now,
      update_time: now,
    };
    row.name_key = row.name.toLowerCase();
    await this.store.datasets.insert(row);
    return this.view(row);
  }

  /** Visible and manageable dataset, or 404/403. */
  async get(p: Principal, id: string): Promise<DatasetRow> {
    return this.access.get(p, id);
  }

  async list(p: Principal, input: ListDatasetsInput) {
    const { total, rows } = await this.store.datasets.list({
      visibleTo: { userTenant: p.tenantId, teamTenants: p.teamTenants },
      id: input.id,
      name: input.name,
      keywords: input.keywords,
      orderBy: input.orderby,
      desc: input.desc,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    });
    if ((input.id || input.name) && total === 0) throw notFound(`Dataset '${input.id ?? input.name}' not found`);
    return { total, datasets: await this.views(rows, input.include_parsing_status ?? false) };
  }

  async update(p: Principal, id: string, input: UpdateDatasetInput) {
    const ds = await this.get(p, id);
    if (Object.keys(input).length === 0) throw badRequest('no properties were modified');
    const patch: DatasetPatch = { update_time: nowMs() };
    if (input.name !== undefined) {
      const name = checkName(input.name);
      if (await this.store.datasets.nameTaken(ds.tenant_id, name.toLowerCase(), ds.id)) throw badRequest(`Dataset name '${name}' already exists`);
      patch.name = name;
      patch.name_key = name.toLowerCase();
    }
    if (input.avatar !== undefined) patch.avatar = checkAvatar(input.avatar);
    if (input.description !== undefined) patch.description = input.description;
    if (input.language !== undefined) patch.language = input.language;
    if (input.pagerank !== undefined) patch.pagerank = input.pagerank;
    if (input.permission !== undefined && input.permission !== ds.permission) {
      if (ds.tenant_id !== p.tenantId) throw forbidden("Only the dataset's owner can change its permission");
      patch.permission = input.permission;
    }
    checkNotBlankModel(input.embedding_model);
    if (input.embedding_model !== undefined && input.embedding_model !== null && input.embedding_model.trim() !== '') {
      const model = await this.models.checkEmbeddingModel(ds.tenant_id, input.embedding_model.trim());
      if (model !== ds.embedding_model) {
        const totals = (await this.store.documents.totals([ds.id])).get(ds.id)!;
        if (totals.chunks > 0) throw badRequest(`embedding_model can only be changed while chunk_count is 0 (dataset has ${totals.chunks} chunks)`);
        patch.embedding_model = model;
      }
    }
    if (input.pipeline_id !== undefined || input.parse_type !== undefined) {
      const pipeline = await this.pipelineChoice(p, input);
      patch.pipeline_id = pipeline?.pipeline_id ?? null;
      patch.parse_type = pipeline?.parse_type ?? null;
    } else if (input.chunk_method !== undefined) {
      // A chunk method chosen: the dataset no longer ingests through its pipeline.
      patch.pipeline_id = null;
      patch.parse_type = null;
    }
    if (input.chunk_method !== undefined || input.parser_config !== undefined) {
      const method = input.chunk_method ?? ds.chunk_method;
      const base = method === ds.chunk_method ? (JSON.parse(ds.parser_config) as Record<string, unknown>) : {};
      patch.chunk_method = method;
      patch.parser_config = JSON.stringify(mergeParserConfig(method as ParserConfigMethod, 'dataset', deepMerge(base, checkParserConfigSize(input.parser_config))));
    }
    await this.store.datasets.update(ds.id, patch);
    return this.view((await this.store.datasets.byId(ds.id))!);
  }

  /**
   * RAGFlow's rule: a dataset ingests through a chunk method (chunk_method, parser_config) or a pipeline
   * (parse_type and pipeline_id, both), never both. The pipeline is a dataflow canvas the caller may use
   * (their own, or shared with their team). Undefined: no pipeline asked for; null pipeline_id: none (back
   * to the chunk method).
   */
  private async pipelineChoice(p: Principal, input: UpdateDatasetInput): Promise<{ pipeline_id: string; parse_type: number } | undefined> {
    if (input.pipeline_id === undefined && input.parse_type === undefined) return undefined;
    if (input.pipeline_id === null) return undefined;
    const given = (['chunk_method', 'parser_config'] as const).filter((k) => input[k] !== undefined && input[k] !== null);
    if (given.length) throw badRequest(`parse_type and pipeline_id choose an ingestion pipeline: ${given.join(' and ')} cannot be given with them (a dataset ingests through a chunk method or a pipeline)`);
    const missing = (['parse_type', 'pipeline_id'] as const).filter((k) => input[k] === undefined || input[k] === null);
    if (missing.length) throw badRequest(`required fields missing: ${missing.join(', ')} (a pipeline is chosen with both parse_type and pipeline_id)`);
    const id = input.pipeline_id!;
    if (id.length !== 32) throw badRequest('pipeline_id must be 32 hex characters');
    if (!/^[0-9a-f]{32}$/i.test(id)) throw badRequest('pipeline_id must be hexadecimal');
    const canvas = await this.store.agents.byId(id.toLowerCase());
    const visible = canvas && (canvas.tenant_id === p.tenantId || (canvas.permission === 'team' && p.teamTenants.includes(canvas.tenant_id)));
    if (!canvas || !visible) throw notFound(`Pipeline '${id}' not found`);
    if (canvas.canvas_category !== DATAFLOW_CANVAS) throw badRequest(`'${canvas.title}' is an agent, not an ingestion pipeline (canvas_category ${DATAFLOW_CANVAS})`);
    return { pipeline_id: canvas.id, parse_type: input.parse_type! };
  }

  /** The shared delete rule: nothing without ids unless delete_all. Unknown ids delete nothing. */
  async delete(p: Principal, ids: string[] | null | undefined, deleteAll: boolean): Promise<{ success_count: number }> {
    const targets = await deleteTargets(ids, deleteAll, (id) => this.get(p, id), async () => {
      const { rows } = await this.store.datasets.list({
        visibleTo: { userTenant: p.tenantId, teamTenants: [] },
        orderBy: 'create_time',
        desc: false,
        offset: 0,
        limit: Number.MAX_SAFE_INTEGER,
      });
      return rows.map((r) => r.id);
    });
    await this.store.datasets.markDeleting(targets, nowMs());
    if (targets.length === 0) return { success_count: 0 };
    // The datasets are gone for every caller now; the answer does not wait for Temporal. Marked
    // 'deleting', they are handed to their workflow again at the next start should this hand-off fail.
    void this.handOff(targets);
    return { success_count: targets.length };
  }

  /**
   * Stops the datasets' parse runs and RAPTOR / graph jobs, then starts the deletion workflow, retrying a
   * few times. The jobs are waited for (within a bound), so that none writes summaries or a graph back
   * after the workflow has removed the dataset's content.
   */
  private async handOff(datasetIds: string[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.stopWork(datasetIds);
        await this.cleanup.startDeleteDatasets(datasetIds);
        return;
      } catch (err) {
        const wait = (this.handOffOptions.retriesMs ?? [500, 2000, 8000, 30000])[attempt];
        if (wait === undefined) return this.handOffOptions.onFailure?.(err, datasetIds);
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
  }

  private async stopWork(datasetIds: string[]): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const id of datasetIds) {
      for (const doc of await this.store.documents.listByDataset(id)) {
        if (doc.run === 'RUNNING') await this.cleanup.cancelParse(doc);
      }
      for (const type of DATASET_INDEX_TYPES) {
        if ((await this.store.enrichment.task(id, type))?.status !== 'running') continue;
        await this.cleanup.cancelDatasetIndex(type, id);
        stopping.push(this.cleanup.waitDatasetIndex(type, id));
      }
    }
    if (!stopping.length) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => (timer = setTimeout(r, this.handOffOptions.indexJobStopMs ?? 60_000).unref()));
    await Promise.race([Promise.all(stopping), bound]).finally(() => clearTimeout(timer));
  }

  private async uniqueName(tenantId: string, name: string): Promise<string> {
    const taken = new Set(await this.store.datasets.namesLike(tenantId, name.toLowerCase()));
    const free = firstFreeName(name, taken, 128);
    if (free === undefined) throw badRequest(`Dataset name '${name}' already exists`);
    return free;
  }

  async view(row: DatasetRow, parsingStatus = false) {
    return (await this.views([row], parsingStatus))[0];
  }

  /**
   * One dataset as RAGFlow's `GET /datasets/{id}` answers it: the list view with its files' total `size` in
   * bytes and its `connectors` (RAGFlow's external data sources; Cairn has none, so always []).
   */
  async detail(p: Principal, id: string) {
    const row = await this.get(p, id);
    return { ...(await this.view(row, true)), size: await this.store.documents.totalSize(row.id), connectors: [] };
  }

  private async views(rows: DatasetRow[], parsingStatus: boolean) {
    const ids = rows.map((r) => r.id);
    const totals = await this.store.documents.totals(ids);
    const counts = parsingStatus ? await this.store.documents.runCounts(ids) : undefined;
    return rows.map((r) => {
      const t = totals.get(r.id)!;
      const view: Record<string, unknown> = {
        id: r.id,
        name: r.name,
        avatar: r.avatar,
        description: r.description,
        tenant_id: r.tenant_id,
        created_by: r.created_by,
        embedding_model: r.embedding_model,
        permission: r.permission,
        chunk_method: r.chunk_method,
        pipeline_id: r.pipeline_id,
        parse_type: r.parse_type,
        parser_config: JSON.parse(r.parser_config),
        pagerank: r.pagerank,
        language: r.language,
        document_count: t.documents,
        chunk_count: t.chunks,
        token_num: t.tokens,
        similarity_threshold: 0.2,
        vector_similarity_weight: 0.3,
        status: '1',
        create_time: toSeconds(r.create_time),
        create_date: toHttpDate(r.create_time),
        update_time: toSeconds(r.update_time),
        update_date: toHttpDate(r.update_time),
      };
      if (counts) {
        const c = counts.get(r.id)!;
        const status = { unstart_count: c.UNSTART, running_count: c.RUNNING, cancel_count: c.CANCEL, done_count: c.DONE, fail_count: c.FAIL };
        Object.assign(view, status, { parsing_status: status });
      }
      return view;
    });
  }
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badRequest('`name` must not be empty');
  if ([...name].length > 128) throw badRequest('`name` must be at most 128 characters');
  if (/[\u{10000}-\u{10FFFF}]/u.test(name)) throw badRequest('`name` must contain only BMP characters (no emoji or other characters beyond U+FFFF)');
  return name;
}

/** RAGFlow's cap on a given parser_config, serialized. */
const PARSER_CONFIG_MAX_CHARS = 65535;

/**
 * A given parser_config (already checked against PARSER_CONFIG_SCHEMA by the route), or `{}` for
 * null/undefined; a 400 when its JSON is longer than RAGFlow allows.
 */
function checkParserConfigSize(config: Record<string, unknown> | null | undefined): Record<string, unknown> {
  if (!config) return {};
  const size = JSON.stringify(config).length;
  if (size > PARSER_CONFIG_MAX_CHARS) {
    throw badRequest(`Parser config exceeds size limit (max 65,535 characters). Current size: ${size}`);
  }
  return config;
}

const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]*)$/;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

/** Avatars are base64 images, either a data URI with an image MIME type or bare base64. */
export function checkAvatar(avatar: string | null | undefined): string | null {
  if (avatar === undefined || avatar === null || avatar === '') return avatar === '' ? '' : null;
  if (avatar.length > 65535) throw badRequest('`avatar` must be at most 65535 characters');
  const uri = DATA_URI.exec(avatar);
  if (uri) {
    if (!uri[1].startsWith('image/')) throw badRequest(`\`avatar\` must be an image; got MIME type ${uri[1]}`);
    return avatar;
  }
  if (avatar.startsWith('data:')) throw badRequest('`avatar` must be data:<mime>;base64,<data> or bare base64');
  if (!BASE64.test(avatar)) throw badRequest('`avatar` must be base64-encoded');
  return avatar;
}

/** `embedding_model` is a model id or null (the default): "" and blanks are refused, as RAGFlow does. */
function checkNotBlankModel(model: string | null | undefined): void {
  if (typeof model === 'string' && model.trim() === '') throw badRequest('`embedding_model` must not be empty or blank: give a model id, or null for the default');
}
