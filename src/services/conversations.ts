import type { Logger } from 'pino';
import type { MetaStore } from '../store/index.js';
import type { StoredMessage } from '../store/sessions.js';
import type { Principal } from './auth.js';
import type { Chat, ChatService } from './chats.js';
import type { SessionService } from './sessions.js';
import type { ProviderService } from './providers.js';
import type { ModelClients } from './model-clients.js';
import type { ChatMessage, ChatModel } from '../models/types.js';
import type { ChunkRetriever, Found } from '../chat/retriever.js';
import type { RetrieveInput } from './retrieval.js';
import type { FinalEvent, Turn, TurnEvent, TurnIds } from '../chat/events.js';
import { ModelError } from '../models/types.js';
import { ApiError, badRequest } from '../errors.js';
import { newId } from '../ids.js';
import { formatKnowledge, renderSystemPrompt, variableValues } from '../chat/prompt.js';
import { historyMessages, modelMessages } from '../chat/history.js';
import { CitationInserter } from '../chat/citations.js';
import { GroundingCheck, groundingCheckOn } from '../chat/grounding.js';
import { buildReference, emptyReference, pickMetadata } from '../chat/references.js';

export interface CompletionInput {
  chat_id: string;
  question: string;
  session_id?: string;
  /** Owner tag of a session created by this call. */
  user_id?: string;
  /** The request's extra keys: values of the chat's custom prompt variables. */
  variables: Record<string, unknown>;
}

/** Retrieval settings a stateless ask adds to the chat's own (a search app's documents, filters...). */
export type RetrievalScope = Pick<RetrieveInput, 'document_ids' | 'keyword' | 'cross_languages' | 'metadata_condition'>;

export interface OpenAICompletionInput {
  chat_id: string;
  /** `model` keeps the chat's model; anything else must be a configured chat model. */
  model: string;
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
  variables: Record<string, unknown>;
  reference: boolean;
  /** Attach each reference chunk's document metadata (only `fields` when given). */
  metadata?: { fields?: string[] };
}

interface TurnPlan {
  principal: Principal;
  chat: Chat;
  model: ChatModel;
  contextTokens: number;
  question: string;
  history: ChatMessage[];
  variables: Record<string, string>;
  /** The caller's own system messages (OpenAI route), appended to the chat's system prompt. */
  extraSystem: string[];
  quote: boolean;
  metadata?: { fields?: string[] };
  scope?: RetrievalScope;
  timings: Record<string, number>;
  /** Stores the finished answer (sessions only). */
  persist?(final: FinalEvent): Promise<void>;
}

/**
 * Conversation turns: retrieval over the chat's datasets, the prompt with `{knowledge}` and custom
 * variables, the model's streamed answer with citations, and the session update.
 *
 * Session consistency: the question is stored when the turn starts; the answer is stored only once it
 * is complete. A failed or abandoned answer leaves the question unanswered in the session and no
 * partial answer is saved.
 */
export class ConversationService {
  constructor(
    private readonly store: MetaStore,
    private readonly chats: ChatService,
    private readonly sessions: SessionService,
    private readonly providers: ProviderService,
    private readonly models: ModelClients,
    private readonly retrieval: ChunkRetriever,
    private readonly log: Logger,
  ) {}

  /** A turn of a session (a new one when no session_id is given): RAGFlow's completion routes. */
  async start(p: Principal, input: CompletionInput): Promise<Turn> {
    const question = input.question.trim();
    if (!question) throw badRequest('The question must not be empty');
    const chat = await this.chats.load(p, input.chat_id);
    const variables = variableValues(chat.promptConfig.parameters, input.variables);
    const { model, contextTokens } = await this.model(p.tenantId, chat.row.llm_id);
    const session = input.session_id
      ? await this.sessions.get(p, chat.row.id, input.session_id)
      : await this.sessions.open(chat, { user_id: input.user_id });
    const history = historyMessages(this.sessions.messages(session));
    const ids: TurnIds = { id: newId(), session_id: session.id, chat_id: chat.row.id };
    await this.sessions.append(session.id, [{ id: ids.id, role: 'user', content: question, created_at: Date.now() / 1000 }]);
    const plan: TurnPlan = {
      principal: p,
      chat,
      model,
      contextTokens,
      question,
      history,
      variables,
      extraSystem: [],
      quote: chat.promptConfig.quote,
      timings: {},
      persist: async (final) => {
        const answer: StoredMessage = { id: ids.id, role: 'assistant', content: final.answer, created_at: Date.now() / 1000 };
        if (final.reasoning) answer.reasoning = final.reasoning;
        if (final.reference.chunks.length) answer.reference = { ...final.reference };
        await this.sessions.append(session.id, [answer]);
      },
    };
    return this.turn(ids, plan);
  }

  /** A stateless turn of the OpenAI-compatible route: the caller sends the history. */
  async startOpenAI(p: Principal, input: OpenAICompletionInput): Promise<Turn> {
    const chat = await this.chats.load(p, input.chat_id);
    const last = input.messages.at(-1);
    if (!input.messages.some((m) => m.role === 'user')) throw badRequest('`messages` must contain at least one message with role user');
    if (last?.role !== 'user') throw badRequest('The last message must be from user: it is the question to answer');
    const variables = variableValues(chat.promptConfig.parameters, input.variables);
    const { model, contextTokens } = await this.model(p.tenantId, input.model === 'model' ? chat.row.llm_id : input.model);
    const ids: TurnIds = { id: newId(), session_id: '', chat_id: chat.row.id };
    const plan: TurnPlan = {
      principal: p,
      chat,
      model,
      contextTokens,
      question: last.content,
      history: historyMessages(input.messages.slice(0, -1)),
      variables,
      extraSystem: input.messages.filter((m) => m.role === 'system').map((m) => m.content),
      quote: chat.promptConfig.quote && input.reference,
      metadata: input.metadata,
      timings: {},
    };
    return this.turn(ids, plan);
  }

  /**
   * A stateless question over a chat built by the caller (a search app's saved configuration): no
   * session, no variables; the caller has checked the chat's datasets and models.
   */
  async ask(p: Principal, chat: Chat, question: string, scope: RetrievalScope = {}): Promise<Turn> {
    if (!question.trim()) throw badRequest('`question` must not be empty');
    const { model, contextTokens } = await this.model(p.tenantId, chat.row.llm_id);
    const ids: TurnIds = { id: newId(), session_id: '', chat_id: chat.row.id };
    return this.turn(ids, { principal: p, chat, model, contextTokens, question: question.trim(), history: [], variables: {}, extraSystem: [], quote: chat.promptConfig.quote, scope, timings: {} });
  }

  private turn(ids: TurnIds, plan: TurnPlan): Turn {
    return { ids, timings: plan.timings, events: (signal) => this.generate(plan, signal) };
  }

  private async model(tenantId: string, llmId: string | null): Promise<{ model: ChatModel; contextTokens: number }> {
    const resolved = llmId ? await this.providers.resolve(tenantId, llmId, 'chat') : await this.providers.resolveDefault(tenantId, 'chat');
    return { model: await this.models.chat(tenantId, resolved.id), contextTokens: resolved.max_tokens };
  }

  private async *generate(plan: TurnPlan, signal?: AbortSignal): AsyncGenerator<TurnEvent> {
    const started = performance.now();
    const since = () => Math.round(performance.now() - started);
    try {
      const { chat } = plan;
      const found = await this.retrieve(plan);
      plan.timings.retrieval_ms = since();
      const emptyResponse = chat.promptConfig.empty_response?.trim() ? chat.promptConfig.empty_response : '';
      if (found.chunks.length === 0 && emptyResponse) {
        const final: FinalEvent = { type: 'final', answer: emptyResponse, reasoning: '', reference: emptyReference(), prompt: '', messages: [] };
        await plan.persist?.(final);
        yield { type: 'answer', delta: emptyResponse, text: emptyResponse };
        yield final;
        return;
      }

      const system = [renderSystemPrompt(chat.promptConfig.system, plan.variables, formatKnowledge(found.chunks)), ...plan.extraSystem]
        .filter((s) => s.trim())
        .join('\n\n');
      const messages = modelMessages(system, plan.history, plan.question, plan.contextTokens);
      const citations = plan.quote && found.chunks.length ? new CitationInserter(found.chunks) : undefined;
      // After the citations: checks each finished sentence (figures and names, when on) and drops the prompt's own words.
      const verify = groundingCheckOn(chat.promptConfig.grounding_check, plan.model.id);
      const grounding = new GroundingCheck(found.chunks, renderSystemPrompt(chat.promptConfig.system, plan.variables, ''), verify, plan.question);
      const { temperature, top_p, presence_penalty, frequency_penalty, max_token } = chat.llmSetting;
      let answer = '';
      let reasoning = '';
      for await (const d of plan.model.stream(messages, { temperature, top_p, presence_penalty, frequency_penalty, max_tokens: max_token, signal })) {
        plan.timings.first_token_ms ??= since();
        if (d.kind === 'reasoning') {
          reasoning += d.text;
          yield { type: 'reasoning', delta: d.text, text: reasoning };
          continue;
        }
        if (d.kind !== 'answer') continue; // tool_calls (no tools are offered here) and usage
        const visible = grounding.push(citations ? citations.push(d.text) : d.text);
        if (!visible) continue;
        answer += visible;
        yield { type: 'answer', delta: visible, text: answer };
      }
      let tail = grounding.push(citations?.end() ?? '') + grounding.end();
      // Every sentence dropped (the prompt's words, or passages already quoted): an honest answer, not an empty one.
      if (!answer.trim() && !tail.trim()) tail = grounding.emptyAnswer();
      if (tail) {
        answer += tail;
        yield { type: 'answer', delta: tail, text: answer };
      }
      const metadata = plan.metadata ? await this.documentMetadata(found, plan.metadata.fields) : undefined;
      const cited = [...new Set([...(citations?.citedIndices() ?? []), ...grounding.quotedIndices()])].sort((a, b) => a - b);
      // `grounding` says what the check did: present when it ran, or when a sentence was dropped all the same.
      const report = grounding.report();
      const reference = {
        ...(found.chunks.length ? buildReference(found.chunks, found.doc_aggs, found.total, cited, metadata) : emptyReference()),
        ...(report.checked || report.replaced.length ? { grounding: report } : {}),
      };
      const final: FinalEvent = { type: 'final', answer, reasoning, reference, prompt: system, messages };
      await plan.persist?.(final);
      plan.timings.total_ms = since();
      yield final;
    } catch (err) {
      if (!(err instanceof ApiError || err instanceof ModelError) && !signal?.aborted) {
        this.log.error({ err, chat_id: plan.chat.row.id }, 'conversation turn failed');
      }
      throw err;
    }
  }

  private async retrieve(plan: TurnPlan): Promise<Found> {
    const { row, datasets } = plan.chat;
    if (datasets.length === 0) return { total: 0, chunks: [], doc_aggs: [] };
    const result = await this.retrieval.retrieve(plan.principal, {
      question: plan.question,
      dataset_ids: datasets.map((d) => d.dataset_id),
      page: 1,
      page_size: row.top_n,
      similarity_threshold: row.similarity_threshold,
      vector_similarity_weight: row.vector_similarity_weight,
      top_k: row.top_k,
      ...(row.rerank_id ? { rerank_id: row.rerank_id } : {}),
      use_kg: plan.chat.promptConfig.use_kg === true,
      ...plan.scope,
    });
    // With use_kg the knowledge-graph chunk comes on top of the top_n chunks, as in RAGFlow.
    const graphChunk = plan.chat.promptConfig.use_kg === true && result.chunks[0]?.document_id === '' ? 1 : 0;
    return { total: result.total, chunks: result.chunks.slice(0, row.top_n + graphChunk), doc_aggs: result.doc_aggs };
  }

  /** meta_fields of the documents of the retrieved chunks. */
  private async documentMetadata(found: Found, fields?: string[]): Promise<Map<string, Record<string, unknown>>> {
    const byDataset = new Map<string, Set<string>>();
    for (const c of found.chunks) byDataset.set(c.dataset_id, (byDataset.get(c.dataset_id) ?? new Set()).add(c.document_id));
    const out = new Map<string, Record<string, unknown>>();
    for (const [datasetId, docIds] of byDataset) {
      for (const doc of await this.store.documents.byIds(datasetId, [...docIds])) {
        out.set(doc.id, pickMetadata(JSON.parse(doc.meta_fields || '{}') as Record<string, unknown>, fields));
      }
    }
    return out;
  }
}
