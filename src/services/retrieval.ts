import type { MetaStore } from '../store/index.js';
import type { ChunkIndex } from '../index/chunks/chunk-index.js';
import type { Principal } from './auth.js';
import type { DatasetAccess } from './access.js';
import type { ModelClients } from './model-clients.js';
import type { MetadataCondition } from '../retrieval/metadata.js';
import type { RetrievalResult } from '../retrieval/types.js';
import { retrieve } from '../retrieval/retrieve.js';
import { GraphContext } from '../enrichment/graph/context.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { METADATA_OPERATORS, type MetadataFilterCondition } from '../retrieval/metadata.js';

export interface RetrieveInput {
  question: string;
  dataset_ids: string[];
  document_ids?: string[] | null;
  page?: number;
  page_size?: number;
  similarity_threshold?: number;
  vector_similarity_weight?: number;
  top_k?: number;
  rerank_id?: string | null;
  keyword?: boolean;
  cross_languages?: string[] | null;
  metadata_condition?: MetadataCondition | null;
  highlight?: boolean;
  /** Put the knowledge-graph chunk (entities, relations, community report matching the question) on top of page 1. */
  use_kg?: boolean | null;
}

/** Dify's external-knowledge request (RAGFlow `/dify/retrieval`), checked. */
export interface DifyRetrieveInput {
  knowledge_id: string;
  query: string;
  top_k: number;
  score_threshold: number;
  metadata_condition?: MetadataCondition;
  use_kg?: boolean;
}

const malformed = (what: string) => badRequest(`invalid or malformed arguments: ${what}; `);
// Dify's operator names mapped onto ours, as RAGFlow's convert_conditions does (plus Dify's date words).
const DIFY_OPERATORS: Record<string, string> = { is: '=', 'not is': '≠', 'is not': '≠', before: '<', after: '>' };

/** The most candidate chunks one retrieval ranks (the retrieval route's and Dify's top_k). */
export const MAX_TOP_K = 10_000;

/** Checks a Dify request (POST body or GET query: numbers and objects may come as strings). */
export function parseDifyRequest(input: Record<string, unknown> | undefined): DifyRetrieveInput {
  const req = input ?? {};
  const missing = ['knowledge_id', 'query'].filter((k) => req[k] === undefined || req[k] === null || (k === 'knowledge_id' && req[k] === ''));
  if (missing.length) throw badRequest(`required arguments are missing: ${missing.join(',')}; `);
  if (typeof req.knowledge_id !== 'string') throw malformed('knowledge_id');
  if (typeof req.query !== 'string') throw malformed('query');
  const setting = jsonish(req.retrieval_setting, 'retrieval_setting') ?? {};
  if (typeof setting !== 'object' || Array.isArray(setting)) throw malformed('retrieval_setting');
  const { top_k: rawTopK, score_threshold: rawThreshold } = setting as Record<string, unknown>;
  const topK = number(rawTopK ?? 1024);
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) throw malformed('retrieval_setting.top_k');
  const threshold = number(rawThreshold ?? 0);
  if (!(threshold >= 0 && threshold <= 1)) throw malformed('retrieval_setting.score_threshold');
  if (req.use_kg !== undefined && req.use_kg !== null && typeof req.use_kg !== 'boolean' && req.use_kg !== 'true' && req.use_kg !== 'false') throw malformed('use_kg');
  return {
    knowledge_id: req.knowledge_id,
    query: req.query,
    top_k: topK,
    score_threshold: threshold,
    metadata_condition: difyCondition(jsonish(req.metadata_condition, 'metadata_condition')),
    use_kg: req.use_kg === true || req.use_kg === 'true',
  };
}

function jsonish(value: unknown, name: string): unknown {
  if (typeof value !== 'string') return value;
  if (!value.trim()) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw malformed(name);
  }
}

function number(value: unknown): number {
  return typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Number(value) : NaN;
}

/** Dify's `{logical_operator, conditions: [{name: string | [string], comparison_operator, value}]}`. */
function difyCondition(value: unknown): MetadataCondition | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw malformed('metadata_condition');
  const c = value as Record<string, unknown>;
  const logic = c.logical_operator ?? c.logic ?? 'and';
  if (logic !== 'and' && logic !== 'or') throw malformed('metadata_condition.logical_operator');
  if (c.conditions === undefined || c.conditions === null) return undefined;
  if (!Array.isArray(c.conditions)) throw malformed('metadata_condition.conditions');
  const conditions: MetadataFilterCondition[] = [];
  for (const [i, raw] of c.conditions.entries()) {
    const cond = raw as Record<string, unknown> | null;
    const names = typeof cond?.name === 'string' ? [cond.name] : cond?.name;
    if (!cond || typeof cond !== 'object' || !Array.isArray(names) || !names.length || !names.every((n) => typeof n === 'string' && n)) throw malformed(`metadata_condition.conditions[${i}].name`);
    const op = typeof cond.comparison_operator === 'string' ? (DIFY_OPERATORS[cond.comparison_operator] ?? cond.comparison_operator) : '';
    if (!(METADATA_OPERATORS as readonly string[]).includes(op)) throw malformed(`metadata_condition.conditions[${i}].comparison_operator`);
    for (const name of names as string[]) conditions.push({ name, comparison_operator: op as MetadataFilterCondition['comparison_operator'], value: cond.value });
  }
  return conditions.length ? { logic, conditions } : undefined;
}

/** RAGFlow's related-question prompt: 5-10 search queries, as a numbered list. */
const RELATED_QUESTIONS_PROMPT = `Role: You are an AI language model assistant tasked with generating 5-10 related questions based on a user's original query. These questions should help expand the search query scope and improve search relevance.

Instructions:
- Use the user's original query to generate 5-10 similar search terms or queries.
- The terms should be closely related to the original query, expand it from different angles, and be concise.
- Answer in the language of the original query.
- Output them as a numbered list, one per line ("1. ...").`;

/** The retrieval operation: access checks and model wiring around the pure hybrid retrieval. */
export class RetrievalService {
  /** The knowledge-graph chunk of use_kg (built on first use; it keeps published graphs' entities in memory). */
  private graph?: GraphContext;

  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetAccess,
    private readonly index: ChunkIndex,
    private readonly models: ModelClients,
  ) {}

  async retrieve(p: Principal, input: RetrieveInput): Promise<RetrievalResult> {
    if (!input.dataset_ids?.length) throw badRequest('`dataset_ids` is required');
    const datasets = await Promise.all([...new Set(input.dataset_ids)].map((id) => this.datasets.get(p, id)));
    const documentIds = input.document_ids?.length ? await this.checkDocuments(datasets.map((d) => d.id), input.document_ids) : undefined;
    const scope = documentIds ? datasets.filter((d) => documentIds.datasets.has(d.id)) : datasets;
    const models = [...new Set(scope.map((d) => d.embedding_model))];
    if (models.length > 1) {
      const what = documentIds ? 'The selected documents' : 'The selected datasets';
      throw badRequest(`${what} use different embedding models (${scope.map((d) => `${d.name}: ${d.embedding_model}`).join(', ')}); retrieve from one embedding model at a time`);
    }
    const owner = scope[0].tenant_id;
    const embedder = await this.models.embedding(owner, models[0]);
    const reranker = input.rerank_id ? await this.models.rerank(p.tenantId, input.rerank_id) : undefined;
    const question = await this.expandQuestion(p, input);
    const pagerank = new Map(datasets.map((d) => [d.id, d.pagerank]));

    const result = await retrieve(
      {
        question,
        dataset_ids: scope.map((d) => d.id),
        document_ids: documentIds ? [...documentIds.ids] : undefined,
        page: input.page,
        page_size: input.page_size,
        similarity_threshold: input.similarity_threshold,
        vector_similarity_weight: input.vector_similarity_weight,
        top_k: input.top_k,
        highlight: input.highlight,
        metadata_condition: input.metadata_condition ?? undefined,
      },
      {
        index: this.index,
        embedQuery: async (text) => (await embedder.embed([text], 'query'))[0],
        rerank: reranker ? (query, docs) => reranker.rerank(query, docs) : undefined,
        pagerankOf: (id) => pagerank.get(id) ?? 0,
        documentMetadata: (ids) => this.store.documents.metaFields(ids),
      },
    );
    if (input.use_kg && (input.page ?? 1) === 1) {
      const graph = await (this.graph ??= new GraphContext(this.store)).chunk(scope.map((d) => d.id), question);
      if (graph) result.chunks.unshift(graph);
    }
    return result;
  }

  /**
   * Dify's external knowledge API over one dataset: `records` of {content, score, title, metadata}, the
   * metadata being the document's meta_fields plus its id. A dataset the caller may not use is "not found".
   */
  async difyRetrieve(p: Principal, input: DifyRetrieveInput) {
    const ds = await this.datasets.get(p, input.knowledge_id).catch((err: unknown) => {
      throw err instanceof ApiError && (err.status === 404 || err.status === 403) ? notFound('Knowledgebase not found!') : err;
    });
    const { chunks } = await this.retrieve(p, {
      question: input.query,
      dataset_ids: [ds.id],
      page: 1,
      page_size: input.top_k,
      top_k: input.top_k,
      similarity_threshold: input.score_threshold,
      metadata_condition: input.metadata_condition,
      use_kg: input.use_kg,
    });
    const metas = new Map((await this.store.documents.metaFields([ds.id])).map((d) => [d.document_id, d.meta_fields]));
    return chunks.map((c) => ({
      content: c.content,
      score: c.similarity,
      title: c.document_name,
      metadata: { ...(metas.get(c.document_id) ?? {}), doc_id: c.document_id, document_id: c.document_id },
    }));
  }

  /**
   * Related search questions for a question (RAGFlow's numbered-list parsing), from the tenant's chat
   * model, or a search app's model and settings.
   */
  async relatedQuestions(p: Principal, question: string, app?: { chatModel?: string; llmSetting?: { temperature?: number; top_p?: number } }): Promise<string[]> {
    if (!question.trim()) throw badRequest('`question` is required');
    // Suggestions are an extra a search page asks for on every query: never worth 20 s of the built-in
    // model on the CPU that the user did not choose (docs/input-limits.md, "Built-in model fallback").
    if (!app?.chatModel && !(await this.models.providers.chosenChatModel(p.tenantId))) {
      throw badRequest('Related questions need a chat model: no default chat model is set (set one with PATCH /api/v1/models/default, or give the search app a chat model); the built-in model is not used for them');
    }
    const chat = await this.models.chat(p.tenantId, app?.chatModel);
    const answer = await chat.complete(
      [
        { role: 'system', content: RELATED_QUESTIONS_PROMPT },
        { role: 'user', content: `Keywords: ${question}\nRelated search terms:\n` },
      ],
      { temperature: app?.llmSetting?.temperature ?? 0.9, ...(app?.llmSetting?.top_p !== undefined ? { top_p: app.llmSetting.top_p } : {}) },
    );
    return answer
      .split('\n')
      .map((line) => /^\s*\d+\.\s+(.*\S)/.exec(line)?.[1])
      .filter((q): q is string => !!q);
  }

  /** Documents must belong to the datasets; returns their ids and the datasets they are in. */
  private async checkDocuments(datasetIds: string[], ids: string[]) {
    const found = (await Promise.all(datasetIds.map((d) => this.store.documents.byIds(d, ids)))).flat();
    const missing = ids.filter((id) => !found.some((d) => d.id === id));
    if (missing.length) throw notFound(`The datasets don't own the document(s) ${missing.join(', ')}`);
    return { ids: new Set(found.map((d) => d.id)), datasets: new Set(found.map((d) => d.dataset_id)) };
  }

  /**
   * keyword: keywords extracted from the question by the tenant's chat model are appended;
   * cross_languages: the question translated into each language, all searched together.
   */
  private async expandQuestion(p: Principal, input: RetrieveInput): Promise<string> {
    const parts = [input.question];
    if (!input.question.trim() || (!input.keyword && !input.cross_languages?.length)) return input.question;
    const chat = await this.models.chat(p.tenantId);
    for (const language of input.cross_languages ?? []) {
      parts.push(
        await chat.complete([
          { role: 'system', content: `Translate the user's text into ${language}. Output only the translation.` },
          { role: 'user', content: input.question },
        ]),
      );
    }
    if (input.keyword) {
      parts.push(
        await chat.complete([
          { role: 'system', content: 'Extract the most important keywords from the user\'s question. Output them on one line, separated by commas, nothing else.' },
          { role: 'user', content: input.question },
        ]),
      );
    }
    return parts.map((s) => s.trim()).filter(Boolean).join('\n');
  }
}
