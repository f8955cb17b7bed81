import type { MetaStore } from '../store/index.js';
import type { SearchAppRow } from '../store/search-apps.js';
import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import type { ProviderService } from './providers.js';
import type { ConversationService } from './conversations.js';
import type { ListPage } from './paging.js';
import type { Turn } from '../chat/events.js';
import type { MetadataCondition } from '../retrieval/metadata.js';
import { DEFAULT_LLM_SETTING, type LlmSetting, type PromptConfig } from '../chat/config.js';
import { KNOWLEDGE } from '../chat/prompt.js';
import { firstFreeName } from './unique-name.js';
import { manualCondition, type MetaDataFilter } from './meta-data-filter.js';
import { newId } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { badRequest, forbidden, notFound } from '../errors.js';

/** RAGFlow's search_config. Keys Cairn does not act on (UI switches such as `summary`) are stored as given. */
export interface SearchConfig {
  kb_ids: string[];
  doc_ids: string[];
  similarity_threshold: number;
  vector_similarity_weight: number;
  use_kg: boolean;
  rerank_id: string;
  top_k: number;
  /** The chat model that answers; empty: the tenant's default chat model. */
  chat_id: string;
  llm_setting: Partial<LlmSetting>;
  cross_languages: string[];
  keyword: boolean;
  highlight: boolean;
  meta_data_filter?: MetaDataFilter | null;
  [uiSwitch: string]: unknown;
}

/** RAGFlow's defaults for a new search app. */
export const SEARCH_CONFIG_DEFAULTS: SearchConfig = {
  kb_ids: [],
  doc_ids: [],
  similarity_threshold: 0.2,
  vector_similarity_weight: 0.3,
  use_kg: false,
  rerank_id: '',
  top_k: 1024,
  summary: false,
  chat_id: '',
  llm_setting: { temperature: 0.1, top_p: 0.3, frequency_penalty: 0.7, presence_penalty: 0.4 },
  cross_languages: [],
  highlight: false,
  keyword: false,
  web_search: false,
  related_search: false,
  query_mindmap: false,
};

/** How many chunks an answer is given (RAGFlow's ask retrieves one page of 12). */
const ANSWER_CHUNKS = 12;
const MAX_NAME_BYTES = 255;

/** The answer prompt of a search app: a summary of the retrieved excerpts, never invented facts. */
const ASK_PROMPT = `Answer the user's question by summarising the knowledge base excerpts below.
- Never invent facts, least of all numbers.
- When the excerpts are only partly relevant, say what does not match and summarise the closest content.
- When nothing in them is relevant, say that no relevant information was found.
- Answer in markdown, in the language of the question.

### Knowledge base excerpts

{${KNOWLEDGE}}`;

export interface SearchAppInput {
  name?: string;
  description?: string | null;
  avatar?: string | null;
  search_config?: Partial<SearchConfig>;
}

export interface ListSearchAppsInput extends ListPage<'create_time' | 'update_time' | 'name'> {
  keywords?: string;
  owner_ids?: string[];
}

/** What a search app needs of the other services: the datasets the caller may use, models, and answers. */
export type SearchAppDatasets = Pick<DatasetService, 'get'>;
export type SearchAppModels = Pick<ProviderService, 'resolve'>;
export type SearchAppAnswers = Pick<ConversationService, 'ask'>;

/**
 * Search apps (RAGFlow's `/searches`): a saved retrieval + answer configuration over datasets. Members
 * of the owner's workspace see them; only their creator changes, deletes or asks them (as RAGFlow).
 */
export class SearchAppService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: SearchAppDatasets,
    private readonly providers: SearchAppModels,
    private readonly conversations: SearchAppAnswers,
  ) {}

  async create(p: Principal, input: SearchAppInput): Promise<{ search_id: string }> {
    const name = checkName(input.name);
    const free = firstFreeName(name, new Set(await this.store.searchApps.namesLike(p.tenantId, name.toLowerCase())), MAX_NAME_BYTES);
    if (free === undefined) throw badRequest(`Search name '${name}' already exists`);
    const config = await this.checkConfig(p, { ...SEARCH_CONFIG_DEFAULTS, ...input.search_config });
    const now = nowMs();
    const row: SearchAppRow = {
      id: newId(),
      tenant_id: p.tenantId,
      created_by: p.userId,
      name: free,
      name_key: free.toLowerCase(),
      description: input.description ?? '',
      avatar: input.avatar ?? null,
      search_config: JSON.stringify(config),
      create_time: now,
      update_time: now,
    };
    await this.store.searchApps.insert(row);
    return { search_id: row.id };
  }

  async list(p: Principal, input: ListSearchAppsInput) {
    const visible = [p.tenantId, ...p.teamTenants];
    const owners = input.owner_ids?.flatMap((o) => o.split(',')).map((o) => o.trim()).filter(Boolean);
    const { total, rows } = await this.store.searchApps.list({
      tenantIds: owners?.length ? visible.filter((t) => owners.includes(t)) : visible,
      keywords: input.keywords,
      orderBy: input.orderby,
      desc: input.desc,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    });
    const views = await this.views(rows);
    return { search_apps: views.map(({ search_config: _config, ...item }) => item), total };
  }

  /** A search app the caller may see: its workspace's (404 for anyone else's). */
  async get(p: Principal, id: string): Promise<SearchAppRow> {
    const row = await this.store.searchApps.byId(id);
    if (!row || (row.tenant_id !== p.tenantId && !p.teamTenants.includes(row.tenant_id))) throw notFound(`Search app '${id}' not found`);
    return row;
  }

  async detail(p: Principal, id: string) {
    return (await this.views([await this.get(p, id)]))[0]!;
  }

  /** RAGFlow's PUT: `name` and `search_config` (merged into the saved one) are required. */
  async update(p: Principal, id: string, input: SearchAppInput) {
    const row = await this.own(p, id);
    const name = checkName(input.name);
    if (await this.store.searchApps.nameTaken(row.tenant_id, name.toLowerCase(), id)) throw badRequest(`Duplicated search name: '${name}' is taken`);
    const config = await this.checkConfig(p, { ...this.config(row), ...input.search_config });
    const patch = {
      name,
      name_key: name.toLowerCase(),
      search_config: JSON.stringify(config),
      update_time: nowMs(),
      ...(input.description !== undefined ? { description: input.description ?? '' } : {}),
      ...(input.avatar !== undefined ? { avatar: input.avatar } : {}),
    };
    await this.store.searchApps.update(id, patch);
    return this.detail(p, id);
  }

  async delete(p: Principal, id: string): Promise<true> {
    await this.own(p, id);
    await this.store.searchApps.delete(id);
    return true;
  }

  /** The saved configuration of a search app the caller may see. */
  async configOf(p: Principal, id: string): Promise<SearchConfig> {
    return this.config(await this.get(p, id));
  }

  /**
   * The app's answer to a question (RAGFlow's search completion): retrieval over its datasets with its
   * settings, then its chat model summarises the chunks with citations. `kb_ids` is used only when the
   * app names no datasets.
   */
  async ask(p: Principal, id: string, question: string, kbIds?: string[]): Promise<Turn> {
    const row = await this.own(p, id);
    const config = this.config(row);
    const datasetIds = config.kb_ids.length ? config.kb_ids : (kbIds ?? []);
    if (!datasetIds.length) throw badRequest('`kb_ids` is required: the search app names no datasets, and the request gave none');
    const datasets = await Promise.all(datasetIds.map((d) => this.datasets.get(p, d)));
    const promptConfig: PromptConfig = { system: ASK_PROMPT, empty_response: '', prologue: '', quote: true, parameters: [{ key: KNOWLEDGE, optional: true }], use_kg: config.use_kg };
    const chat = {
      row: {
        id: row.id,
        tenant_id: row.tenant_id,
        created_by: row.created_by,
        name: row.name,
        description: row.description,
        icon: '',
        llm_id: config.chat_id || null,
        llm_setting: '',
        prompt_config: '',
        similarity_threshold: config.similarity_threshold,
        vector_similarity_weight: config.vector_similarity_weight,
        top_n: ANSWER_CHUNKS,
        top_k: config.top_k,
        rerank_id: config.rerank_id,
        create_time: row.create_time,
        update_time: row.update_time,
      },
      llmSetting: { ...DEFAULT_LLM_SETTING, ...config.llm_setting },
      promptConfig,
      datasets: datasets.map((d) => ({ chat_id: row.id, dataset_id: d.id, name: d.name, embedding_model: d.embedding_model })),
    };
    return this.conversations.ask(p, chat, question, retrievalScope(config));
  }

  /** Only the creator changes, deletes or asks a search app; a workspace member who is not gets 403. */
  private async own(p: Principal, id: string): Promise<SearchAppRow> {
    const row = await this.get(p, id);
    if (row.created_by !== p.userId) throw forbidden(`No authorization: only the creator of search app '${id}' may change or ask it`);
    return row;
  }

  private config(row: SearchAppRow): SearchConfig {
    return { ...SEARCH_CONFIG_DEFAULTS, ...(JSON.parse(row.search_config) as Partial<SearchConfig>) };
  }

  /** Datasets the caller may use, one embedding model, and configured models: a 4xx now rather than at the first question. */
  private async checkConfig(p: Principal, config: SearchConfig): Promise<SearchConfig> {
    const datasets = await Promise.all([...new Set(config.kb_ids)].map((id) => this.datasets.get(p, id)));
    const models = [...new Set(datasets.map((d) => d.embedding_model))];
    if (models.length > 1) throw badRequest(`The datasets of a search app must use one embedding model; these use ${models.join(', ')}`);
    if (config.chat_id) await this.providers.resolve(p.tenantId, config.chat_id, 'chat');
    if (config.rerank_id) await this.providers.resolve(p.tenantId, config.rerank_id, 'rerank');
    manualCondition(config.meta_data_filter);
    return config;
  }

  private async views(rows: SearchAppRow[]) {
    const owners = new Map<string, string>();
    for (const id of new Set(rows.map((r) => r.tenant_id))) owners.set(id, (await this.store.users.byId(id))?.nickname ?? '');
    return rows.map((r) => ({
      id: r.id,
      avatar: r.avatar,
      tenant_id: r.tenant_id,
      name: r.name,
      description: r.description,
      created_by: r.created_by,
      search_config: this.config(r),
      status: '1',
      nickname: owners.get(r.tenant_id) ?? '',
      tenant_avatar: null,
      create_time: toSeconds(r.create_time),
      create_date: toHttpDate(r.create_time),
      update_time: toSeconds(r.update_time),
      update_date: toHttpDate(r.update_time),
    }));
  }
}

/** The retrieval settings of a search app beyond the chat-like ones. */
export function retrievalScope(config: SearchConfig): { document_ids?: string[]; keyword: boolean; cross_languages: string[]; metadata_condition?: MetadataCondition } {
  return {
    ...(config.doc_ids.length ? { document_ids: config.doc_ids } : {}),
    keyword: config.keyword,
    cross_languages: config.cross_languages,
    metadata_condition: manualCondition(config.meta_data_filter),
  };
}

function checkName(raw: unknown): string {
  if (typeof raw !== 'string') throw badRequest('Search name must be string.');
  const name = raw.trim();
  if (!name) throw badRequest("Search name can't be empty.");
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw badRequest(`Search name must be at most ${MAX_NAME_BYTES} bytes (it is ${Buffer.byteLength(name)})`);
  return name;
}
