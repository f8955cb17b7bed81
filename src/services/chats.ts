import type { MetaStore } from '../store/index.js';
import type { ChatDatasetRef, ChatRow } from '../store/chats.js';
import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import type { ProviderService } from './providers.js';
import { checkAvatar } from './datasets.js';
import { partialDeleteTargets, type PartialDelete } from './delete-targets.js';
import { newId } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { badRequest, notFound } from '../errors.js';
import { DEFAULT_LLM_SETTING, RETRIEVAL_DEFAULTS, defaultPromptConfig, type LlmSetting, type PromptConfig } from '../chat/config.js';
import { checkPromptConfig, KNOWLEDGE, promptVariables } from '../chat/prompt.js';
import type { ListPage } from './paging.js';

/** Create and update take the same keys; update changes only the keys given. */
export interface ChatInput {
  name?: string;
  icon?: string | null;
  description?: string | null;
  dataset_ids?: string[] | null;
  llm_id?: string | null;
  /** `max_tokens` is accepted as RAGFlow's name of `max_token`. */
  llm_setting?: (Partial<LlmSetting> & { max_tokens?: number }) | null;
  prompt_config?: Partial<PromptConfig> | null;
  similarity_threshold?: number;
  vector_similarity_weight?: number;
  top_n?: number;
  top_k?: number;
  rerank_id?: string | null;
}

export interface ListChatsInput extends ListPage<'create_time' | 'update_time' | 'name'> {
  keywords?: string;
  owner_ids?: string[];
  parser_id?: string;
}

/** A chat with its settings parsed, as a conversation uses it. */
export interface Chat {
  row: ChatRow;
  llmSetting: LlmSetting;
  promptConfig: PromptConfig;
  /** Attached datasets that still exist. */
  datasets: ChatDatasetRef[];
}

const MAX_NAME_BYTES = 255;

export class ChatService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetService,
    private readonly providers: ProviderService,
  ) {}

  async create(p: Principal, input: ChatInput) {
    const now = nowMs();
    const base: ChatRow = {
      id: newId(),
      tenant_id: p.tenantId,
      created_by: p.userId,
      name: '',
      description: '',
      icon: '',
      llm_id: null,
      llm_setting: JSON.stringify(DEFAULT_LLM_SETTING),
      prompt_config: JSON.stringify(defaultPromptConfig()),
      ...RETRIEVAL_DEFAULTS,
      rerank_id: '',
      create_time: now,
      update_time: now,
    };
    const { row, datasetIds } = await this.apply(p, base, { ...input, llm_id: input.llm_id ?? null }, true);
    await this.store.chats.insert(row, datasetIds ?? []);
    return this.view(row);
  }

  /** The caller's chat, or 404: chats belong to one tenant and are invisible to others. */
  async get(p: Principal, id: string): Promise<ChatRow> {
    const row = await this.store.chats.byId(id);
    if (!row || row.tenant_id !== p.tenantId) throw notFound(`Chat '${id}' not found`);
    return row;
  }

  async load(p: Principal, id: string): Promise<Chat> {
    const row = await this.get(p, id);
    return {
      row,
      llmSetting: JSON.parse(row.llm_setting) as LlmSetting,
      promptConfig: JSON.parse(row.prompt_config) as PromptConfig,
      datasets: (await this.store.chats.datasets([row.id])).get(row.id)!,
    };
  }

  async list(p: Principal, input: ListChatsInput) {
    const exact = Boolean(input.id || input.name);
    const ownerIds = input.owner_ids?.flatMap((o) => o.split(',')).map((o) => o.trim()).filter(Boolean);
    const { total, rows } = await this.store.chats.list({
      tenantId: p.tenantId,
      id: input.id,
      name: input.name,
      keywords: exact ? undefined : input.keywords,
      ownerIds: ownerIds?.length ? ownerIds : undefined,
      chunkMethod: input.parser_id,
      orderBy: input.orderby,
      desc: input.desc,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    });
    return { chats: await this.views(rows), total };
  }

  async update(p: Principal, id: string, input: ChatInput) {
    const current = await this.get(p, id);
    const { row, datasetIds } = await this.apply(p, current, input, false);
    const { id: _id, tenant_id: _tenant, created_by: _by, create_time: _created, ...patch } = row;
    await this.store.chats.update(id, patch, datasetIds);
    return this.view((await this.store.chats.byId(id))!);
  }

  /** Partial: valid ids go, the others are reported in `errors`; an error only when none goes. */
  async delete(p: Principal, ids: string[] | null | undefined, deleteAll: boolean): Promise<PartialDelete> {
    const { targets, errors } = await partialDeleteTargets(ids, deleteAll, (id) => this.get(p, id), () => this.store.chats.idsOfTenant(p.tenantId));
    await this.store.chats.delete(targets);
    return { success_count: targets.length, errors };
  }

  async view(row: ChatRow) {
    return (await this.views([row]))[0]!;
  }

  private async views(rows: ChatRow[]) {
    const attached = await this.store.chats.datasets(rows.map((r) => r.id));
    return rows.map((r) => {
      const datasets = attached.get(r.id)!;
      return {
        id: r.id,
        tenant_id: r.tenant_id,
        name: r.name,
        description: r.description,
        icon: r.icon,
        language: 'English',
        llm_id: r.llm_id,
        llm_setting: JSON.parse(r.llm_setting) as LlmSetting,
        prompt_type: 'simple',
        prompt_config: JSON.parse(r.prompt_config) as PromptConfig,
        similarity_threshold: r.similarity_threshold,
        vector_similarity_weight: r.vector_similarity_weight,
        top_n: r.top_n,
        top_k: r.top_k,
        rerank_id: r.rerank_id,
        dataset_ids: datasets.map((d) => d.dataset_id),
        kb_names: datasets.map((d) => d.name),
        do_refer: '1',
        status: '1',
        create_time: toSeconds(r.create_time),
        create_date: toHttpDate(r.create_time),
        update_time: toSeconds(r.update_time),
        update_date: toHttpDate(r.update_time),
      };
    });
  }

  /**
   * The row after applying the given keys (llm_setting and prompt_config are merged into the current
   * ones), checked as a whole; `datasetIds` is set when the attached datasets change.
   */
  private async apply(p: Principal, current: ChatRow, input: ChatInput, creating: boolean): Promise<{ row: ChatRow; datasetIds?: string[] }> {
    const row: ChatRow = { ...current, update_time: nowMs() };
    if (input.name !== undefined || creating) row.name = await this.checkName(p.tenantId, input.name ?? '', current.id, creating);
    if (input.icon !== undefined) row.icon = checkAvatar(input.icon) ?? '';
    if (input.description !== undefined) row.description = input.description ?? '';
    if (input.llm_id !== undefined) row.llm_id = await this.checkChatModel(p.tenantId, input.llm_id);
    if (input.rerank_id !== undefined) row.rerank_id = await this.checkRerankModel(p.tenantId, input.rerank_id);
    if (input.llm_setting) {
      const { max_tokens, model_type: _ignored, ...given } = input.llm_setting as typeof input.llm_setting & { model_type?: string };
      const merged = { ...(JSON.parse(current.llm_setting) as LlmSetting), ...given };
      if (max_tokens !== undefined && given.max_token === undefined) merged.max_token = max_tokens;
      row.llm_setting = JSON.stringify(merged);
    }
    if (input.prompt_config) {
      const merged = { ...(JSON.parse(current.prompt_config) as PromptConfig), ...input.prompt_config };
      // A parameter's `value` (sent by RAGFlow's UI) means nothing here: values come with each question.
      if (input.prompt_config.parameters) merged.parameters = input.prompt_config.parameters.map(({ key, optional }) => ({ key, optional }));
      else merged.parameters = implicitParameters(merged);
      merged.empty_response ??= '';
      checkPromptConfig(merged);
      row.prompt_config = JSON.stringify(merged);
    }
    for (const key of ['similarity_threshold', 'vector_similarity_weight', 'top_n', 'top_k'] as const) {
      if (input[key] !== undefined) row[key] = input[key];
    }
    const datasetIds = input.dataset_ids !== undefined ? await this.checkDatasets(p, input.dataset_ids ?? []) : undefined;
    return { row, datasetIds };
  }

  private async checkName(tenantId: string, raw: string, chatId: string, creating: boolean): Promise<string> {
    const name = raw.trim();
    if (!name) throw badRequest('`name` is required and must not be blank');
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw badRequest(`\`name\` must be at most ${MAX_NAME_BYTES} bytes`);
    // RAGFlow's messages; names are compared case-insensitively.
    if (await this.store.chats.nameTaken(tenantId, name, chatId)) throw badRequest(creating ? 'Duplicated chat name in creating chat' : 'Duplicated chat name');
    return name;
  }

  /** A given model must be a configured chat model; none means the tenant's default chat model (if any). */
  private async checkChatModel(tenantId: string, llmId: string | null): Promise<string | null> {
    const id = llmId?.trim();
    if (!id) return (await this.providers.getDefaults(tenantId)).chat_model;
    await this.providers.resolve(tenantId, id, 'chat');
    return id;
  }

  private async checkRerankModel(tenantId: string, rerankId: string | null): Promise<string> {
    const id = rerankId?.trim();
    if (!id) return '';
    await this.providers.resolve(tenantId, id, 'rerank');
    return id;
  }

  /** Datasets the caller may manage (404/403 otherwise), all embedded with the same model, each with chunks. */
  private async checkDatasets(p: Principal, ids: string[]): Promise<string[]> {
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup) throw badRequest(`\`dataset_ids\` lists dataset '${dup}' twice`);
    const rows = [];
    for (const id of ids) rows.push(await this.datasets.get(p, id));
    const models = [...new Set(rows.map((r) => r.embedding_model))];
    if (models.length > 1) throw badRequest(`The datasets of a chat must use one embedding model; these use ${models.join(', ')}`);
    // As RAGFlow: an assistant over a dataset with nothing parsed could only ever answer from nothing.
    const totals = await this.store.documents.totals(ids);
    const unparsed = ids.find((id) => !totals.get(id)?.chunks);
    if (unparsed) throw badRequest(`The dataset ${unparsed} doesn't own parsed file: parse a document into chunks before attaching it`);
    return ids;
  }
}

/**
 * Without explicit parameters, the default `knowledge` parameter applies only when the system prompt
 * uses `{knowledge}` (RAGFlow accepts a system prompt without it); other kept parameters stay.
 */
function implicitParameters(config: PromptConfig): PromptConfig['parameters'] {
  const current = config.parameters ?? [];
  const others = current.filter((p) => p.key !== KNOWLEDGE);
  if (!promptVariables(config.system ?? '').includes(KNOWLEDGE)) return others;
  const knowledge = current.find((p) => p.key === KNOWLEDGE) ?? { key: KNOWLEDGE, optional: true };
  return [knowledge, ...others];
}
