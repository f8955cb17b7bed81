/**
 * Memories (spec "Memory", "Memory message", Memories operations): CRUD, adding conversation turns,
 * forgetting, status, listing, hybrid search and recency. Messages live in the MemoryIndex port; the
 * items extracted from each raw message are produced by the memoryExtraction workflow
 * (workflows/memory-extraction.ts, activities/memories.ts, MemoryExtractor in memory-extractor.ts).
 *
 * For the agent engine: `addTurn` and `searchForAgent` (tenant-scoped, per-memory results / plain lists).
 */
import type { MetaStore } from '../store/index.js';
import { firstFreeName } from './unique-name.js';
import type { MemoryPatch, MemoryRow, MemoryTaskRow } from '../store/memories.js';
import type { MemoryIndex, MemoryMessage, NewMemoryMessage } from '../index/memories/memory-index.js';
import type { Principal } from './auth.js';
import type { ModelClients } from './model-clients.js';
import type { ModelType } from './providers.js';
import { requireManage, tenantPrincipal } from './access.js';
import { checkAvatar } from './datasets.js';
import { newId } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { ApiError, badRequest, forbidden, notFound } from '../errors.js';
import { MODEL_ID_MAX_LENGTH, parseModelId } from '../models/model-id.js';
import {
  DEFAULT_MEMORY_SIZE, DEFAULT_TEMPERATURE, FORGETTING_POLICIES, MAX_AVATAR, MAX_MEMORY_NAME, MAX_MEMORY_SIZE, MEMORY_TYPES,
  STORAGE_TYPES, isMemoryType, typeMask, typesOf, type MemoryTasks, type MemoryType,
} from '../memories/types.js';
import { assembleSystemPrompt, fixedPartProblem, rawContent } from '../memories/prompts.js';
import { messageSize, MemoryFullError } from '../memories/size.js';
import { searchMessages, SEARCH_DEFAULTS, type ScoredMessage } from '../memories/search.js';
import { isCurrent } from '../memories/stale-turns.js';
import { parseApiTime, searchScope } from '../memories/search-scope.js';
import { isoDate, sourceTurns } from '../memories/source-turns.js';
import { isUniqueViolation } from '../store/dialect.js';

export interface CreateMemoryInput {
  name: string;
  memory_type: unknown;
  embd_id: string;
  llm_id: string;
  description?: string | null;
  avatar?: string | null;
  permission?: string;
  permissions?: string;
  memory_size?: number;
  forgetting_policy?: string;
  temperature?: number;
  system_prompt?: string | null;
  user_prompt?: string | null;
}

export type UpdateMemoryInput = Partial<CreateMemoryInput>;

export interface ListMemoriesInput {
  page: number;
  page_size: number;
  orderby?: 'create_time' | 'update_time';
  desc?: boolean;
  memory_type?: string[];
  tenant_id?: string[];
  owner_ids?: string[];
  ids?: string[];
  storage_type?: string;
  keywords?: string;
}

/** One conversation turn to remember (RAGFlow's add_message body). */
export interface TurnInput {
  memory_ids: string[];
  agent_id: string;
  session_id: string;
  user_input: string;
  agent_response: string;
  /** Who the turn is about; the HTTP route always passes the authenticated user's id. */
  user_id?: string;
  /** Optional identity of the turn (e.g. the agent run id): adding the same key to a memory twice stores it once. */
  turn_key?: string;
  /**
   * When the turn was said (Cairn extension): Unix seconds or ISO 8601; default now. Becomes the raw
   * message's valid_at and the extraction's conversation time.
   */
  valid_at?: unknown;
}

/** The outcome of a turn for one memory: the raw message id, or why it was not added. */
export interface TurnResult {
  memory_id: string;
  message_id?: number;
  /** Set when the message was not stored (e.g. memory not found, too large, model failure). */
  error?: string;
  /** Set when the message was stored but its extraction workflow could not be started. */
  task_error?: string;
}

export interface SearchInput {
  query: string;
  memory_ids: string[];
  agent_id?: string | null;
  session_id?: string | null;
  user_id?: string | null;
  similarity_threshold?: number;
  keywords_similarity_weight?: number;
  top_n?: number;
  /** Cairn extensions (src/memories/search-scope.ts, source-turns.ts). */
  valid_since?: unknown;
  valid_until?: unknown;
  message_type?: string[] | string;
  include_source?: boolean;
  /** Also the facts no longer current (invalid_at passed: updated, contradicted, corrected, retracted). */
  include_invalid?: boolean;
}

export interface RecentInput {
  memory_ids: string[];
  agent_id?: string | null;
  session_id?: string | null;
  limit?: number;
  include_invalid?: boolean;
}

function checkName(raw: unknown): string {
  if (typeof raw !== 'string' || !raw.trim()) throw badRequest('Memory name cannot be empty or whitespace.');
  const name = raw.trim();
  if ([...name].length > MAX_MEMORY_NAME) throw badRequest(`Memory name '${name}' exceeds limit of ${MAX_MEMORY_NAME}.`);
  if (/[\u{10000}-\u{10FFFF}]/u.test(name)) throw badRequest(`Memory name '${name}' must contain only BMP characters (no emoji or other characters beyond U+FFFF).`);
  return name;
}

function checkTypes(raw: unknown): MemoryType[] {
  if (!Array.isArray(raw)) throw badRequest('Memory type must be a list.');
  if (raw.length === 0) throw badRequest(`Memory type must not be empty: choose from ${MEMORY_TYPES.join(', ')}.`);
  const unknown = raw.filter((t) => !isMemoryType(t));
  if (unknown.length) throw badRequest(`Memory type '${unknown.map(String).join("', '")}' is not supported: choose from ${MEMORY_TYPES.join(', ')}.`);
  return typesOf(typeMask(raw as MemoryType[]));
}

function checkPermission(value: string): 'me' | 'team' {
  if (value !== 'me' && value !== 'team') throw badRequest(`Unknown permission '${value}': use 'me' or 'team'.`);
  return value;
}

function checkSize(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_MEMORY_SIZE) {
    throw badRequest(`Memory size should be in range (0, ${MAX_MEMORY_SIZE}] Bytes.`);
  }
  return value;
}

function checkPolicy(value: string): string {
  if (!(FORGETTING_POLICIES as readonly string[]).includes(value)) throw badRequest(`Forgetting policy '${value}' is not supported: use ${FORGETTING_POLICIES.join(', ')}.`);
  return value;
}

function checkTemperature(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) throw badRequest('Temperature should be in range [0, 1].');
  return value;
}

function checkSystemPrompt(prompt: string): string {
  const problem = fixedPartProblem(prompt);
  if (problem) throw badRequest(`system_prompt: ${problem}.`);
  return prompt;
}

/** "memory_id:message_id" of the message routes; message ids are integers. */
export function parseMessageRef(ref: string): { memoryId: string; messageId: number } {
  const cut = ref.lastIndexOf(':');
  const memoryId = cut > 0 ? ref.slice(0, cut) : '';
  const idText = cut > 0 ? ref.slice(cut + 1) : '';
  if (!memoryId || !/^\d{1,15}$/.test(idText)) throw badRequest(`'${ref}' is not a message reference: use <memory_id>:<message_id> with an integer message id.`);
  return { memoryId, messageId: Number(idText) };
}

/** Splits "a,b" items and drops empties: list parameters may be repeated or comma-separated. */
export function splitList(values: string[] | string | undefined | null): string[] {
  const list = values === undefined || values === null ? [] : Array.isArray(values) ? values : [values];
  return [...new Set(list.flatMap((v) => String(v).split(',')).map((v) => v.trim()).filter(Boolean))];
}

const seconds = (ms: number | null) => (ms === null ? null : toSeconds(ms));

export class MemoryService {
  constructor(
    private readonly store: MetaStore,
    private readonly index: MemoryIndex,
    private readonly models: ModelClients,
    private readonly tasks: MemoryTasks,
  ) {}

  // ---------------------------------------------------------------- memories

  async create(p: Principal, input: CreateMemoryInput) {
    const name = checkName(input.name);
    const types = checkTypes(input.memory_type);
    const embdId = await this.checkModel(p.tenantId, input.embd_id, 'embedding', 'embd_id');
    const llmId = await this.checkModel(p.tenantId, input.llm_id, 'chat', 'llm_id');
    const permission = input.permission ?? input.permissions;
    const now = nowMs();
    const row: MemoryRow = {
      id: newId(),
      tenant_id: p.tenantId,
      created_by: p.userId,
      name,
      name_key: '',
      avatar: checkAvatar(input.avatar),
      description: input.description ?? null,
      memory_type: typeMask(types),
      storage_type: 'table',
      embd_id: embdId,
      llm_id: llmId,
      permission: permission === undefined ? 'me' : checkPermission(permission),
      memory_size: input.memory_size === undefined ? DEFAULT_MEMORY_SIZE : checkSize(input.memory_size),
      forgetting_policy: input.forgetting_policy === undefined ? 'FIFO' : checkPolicy(input.forgetting_policy),
      temperature: input.temperature === undefined ? DEFAULT_TEMPERATURE : checkTemperature(input.temperature),
      system_prompt: input.system_prompt ? checkSystemPrompt(input.system_prompt) : assembleSystemPrompt(types),
      user_prompt: input.user_prompt ?? '',
      create_time: now,
      update_time: now,
    };
    // Two creates with the same name at once: the unique index refuses the second, which takes the next suffix.
    for (let attempt = 0; ; attempt++) {
      row.name = await this.uniqueName(p.tenantId, name);
      row.name_key = row.name.toLowerCase();
      try {
        await this.store.memories.insert(row);
        break;
      } catch (err) {
        if (attempt >= 3 || !isUniqueViolation(err)) throw err;
      }
    }
    return this.view(row);
  }

  /** A memory the caller may manage, or 404 (another tenant's) / 403 (a teammate's private memory). */
  async get(p: Principal, id: string): Promise<MemoryRow> {
    return requireManage(p, await this.store.memories.byId(id), 'Memory', id);
  }

  async config(p: Principal, id: string) {
    return this.view(await this.get(p, id));
  }

  async list(p: Principal, input: ListMemoriesInput) {
    const types = splitList(input.memory_type);
    const unknown = types.filter((t) => !isMemoryType(t));
    if (unknown.length) throw badRequest(`Memory type '${unknown.join("', '")}' is not supported: choose from ${MEMORY_TYPES.join(', ')}.`);
    const ids = splitList(input.ids);
    if (ids.length > 100) throw badRequest('ids must contain at most 100 IDs');
    const storage = input.storage_type?.trim();
    if (storage && !(STORAGE_TYPES as readonly string[]).includes(storage)) throw badRequest(`Storage type '${storage}' is not supported: use ${STORAGE_TYPES.join(', ')}.`);
    const { total, rows } = await this.store.memories.list({
      visibleTo: { userTenant: p.tenantId, teamTenants: p.teamTenants },
      ownerIds: splitList([...(input.tenant_id ?? []), ...(input.owner_ids ?? [])]),
      ids,
      typeMask: types.length ? typeMask(types as MemoryType[]) : undefined,
      storageType: storage || undefined,
      keywords: input.keywords?.trim() || undefined,
      orderBy: input.orderby ?? 'create_time',
      desc: input.desc ?? true,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    });
    const owners = await this.store.memories.ownerNames(rows.map((r) => r.tenant_id));
    return {
      memory_list: rows.map((r) => ({ ...this.viewWith(r, owners), embd_name: safeModelName(r.embd_id) })),
      total_count: total,
    };
  }

  async update(p: Principal, id: string, input: UpdateMemoryInput) {
    const memory = await this.get(p, id);
    const given = Object.entries(input).filter(([, v]) => v !== undefined);
    if (given.length === 0) throw badRequest('No properties were given to update.');
    const patch: MemoryPatch = { update_time: nowMs() };
    if (input.name !== undefined) {
      const name = checkName(input.name);
      if (await this.store.memories.nameTaken(memory.tenant_id, name.toLowerCase(), memory.id)) throw badRequest(`Memory name '${name}' already exists.`);
      patch.name = name;
      patch.name_key = name.toLowerCase();
    }
    if (input.avatar !== undefined) {
      if (typeof input.avatar === 'string' && input.avatar.length > MAX_AVATAR) throw badRequest(`\`avatar\` must be at most ${MAX_AVATAR} characters`);
      patch.avatar = checkAvatar(input.avatar);
    }
    if (input.description !== undefined) patch.description = input.description;
    const permission = input.permission ?? input.permissions;
    if (permission !== undefined && checkPermission(permission) !== memory.permission) {
      if (memory.tenant_id !== p.tenantId) throw forbidden("Only the memory's owner can change its permission.");
      patch.permission = permission as 'me' | 'team';
    }
    if (input.llm_id !== undefined) patch.llm_id = await this.checkModel(memory.tenant_id, input.llm_id, 'chat', 'llm_id');
    if (input.embd_id !== undefined) {
      const embdId = await this.checkModel(memory.tenant_id, input.embd_id, 'embedding', 'embd_id');
      if (embdId !== memory.embd_id) {
        if ((await this.index.usage(memory.id)).messages > 0) throw badRequest("Can't update ['embd_id'] when memory isn't empty.");
        patch.embd_id = embdId;
      }
    }
    if (input.memory_size !== undefined) patch.memory_size = checkSize(input.memory_size);
    if (input.forgetting_policy !== undefined) patch.forgetting_policy = checkPolicy(input.forgetting_policy);
    if (input.temperature !== undefined) patch.temperature = checkTemperature(input.temperature);
    if (input.user_prompt !== undefined) patch.user_prompt = input.user_prompt ?? '';
    let types = typesOf(memory.memory_type);
    if (input.memory_type !== undefined) {
      const next = checkTypes(input.memory_type);
      // A prompt still as generated follows the new types; a prompt the user wrote is kept.
      if (input.system_prompt === undefined && memory.system_prompt === assembleSystemPrompt(types)) patch.system_prompt = assembleSystemPrompt(next);
      patch.memory_type = typeMask(next);
      types = next;
    }
    if (input.system_prompt !== undefined) {
      patch.system_prompt = input.system_prompt?.trim() ? checkSystemPrompt(input.system_prompt) : assembleSystemPrompt(types);
    }
    await this.store.memories.update(memory.id, patch);
    // A smaller memory_size applies at once: FIFO removes messages until the memory fits.
    if (patch.memory_size !== undefined && patch.memory_size < memory.memory_size) await this.index.fitWithin(memory.id, patch.memory_size);
    return this.view((await this.store.memories.byId(memory.id))!);
  }

  /** Removes the memory, its messages and their tasks. A running extraction finds it gone and stops. */
  async delete(p: Principal, id: string): Promise<void> {
    const memory = await this.get(p, id);
    await this.index.deleteMemory(memory.id);
    await this.store.memories.remove(memory.id);
  }

  /** The stored byte total of a memory and the total counted from its messages (they are always equal). */
  async usage(p: Principal, id: string) {
    const memory = await this.get(p, id);
    const [stored, recount] = await Promise.all([this.index.usage(memory.id), this.index.recount(memory.id)]);
    return { memory_size: memory.memory_size, stored, recount };
  }

  // ---------------------------------------------------------------- messages

  /**
   * POST /messages: all or nothing. Every memory must exist and be the caller's to manage and the message
   * must fit in each, else a 4xx and nothing is stored. user_id is always the caller's.
   */
  async addMessage(p: Principal, input: Omit<TurnInput, 'user_id' | 'turn_key'>): Promise<TurnResult[]> {
    const memoryIds = splitList(input.memory_ids);
    if (memoryIds.length === 0) throw badRequest('`memory_id` must name at least one memory.');
    const memories = await Promise.all(memoryIds.map((id) => this.get(p, id)));
    const turn = { ...input, memory_ids: memoryIds, user_id: p.userId };
    const prepared = await this.prepare(memories, turn);
    for (const item of prepared) if (item.size > item.memory.memory_size) throw tooLarge(item.memory, item.size);
    const results: TurnResult[] = [];
    for (const item of prepared) results.push(await this.storeRaw(item));
    return results;
  }

  /**
   * For the agent engine: writes one turn to each memory of the agent owner's tenant, independently.
   * Never throws for a memory's failure: each result carries its message id or its error.
   */
  async addTurn(tenantId: string | Principal, input: TurnInput): Promise<TurnResult[]> {
    const p = typeof tenantId === 'string' ? tenantPrincipal(tenantId) : tenantId;
    const results: TurnResult[] = [];
    for (const memoryId of splitList(input.memory_ids)) {
      try {
        const memory = await this.get(p, memoryId);
        const [item] = await this.prepare([memory], { ...input, user_id: input.user_id ?? '' });
        if (item!.size > memory.memory_size) throw tooLarge(memory, item!.size);
        results.push(await this.storeRaw(item!));
      } catch (err) {
        results.push({ memory_id: memoryId, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return results;
  }

  /** Builds and embeds the raw message for each memory (one embedding call per embedding model). */
  private async prepare(memories: MemoryRow[], turn: TurnInput) {
    const content = rawContent(turn.user_input, turn.agent_response);
    const vectors = new Map<string, number[]>();
    const now = turn.valid_at === undefined || turn.valid_at === null ? nowMs() : parseApiTime(turn.valid_at, 'valid_at');
    const out = [];
    for (const memory of memories) {
      const key = `${memory.tenant_id}\n${memory.embd_id}`;
      let vector = vectors.get(key);
      if (!vector) {
        const model = await this.models.embedding(memory.tenant_id, memory.embd_id);
        vector = (await model.embed([content]))[0]!;
        vectors.set(key, vector);
      }
      const message: NewMemoryMessage = {
        message_type: 'raw',
        source_id: 0,
        user_id: turn.user_id ?? '',
        agent_id: turn.agent_id,
        session_id: turn.session_id,
        content,
        vector,
        valid_at: now,
        dedup_key: turn.turn_key ? `turn:${turn.turn_key}` : undefined,
      };
      out.push({ memory, message, size: messageSize(content, vector.length) });
    }
    return out;
  }

  private async storeRaw({ memory, message }: { memory: MemoryRow; message: NewMemoryMessage }): Promise<TurnResult> {
    let added;
    try {
      added = await this.index.add(memory.id, [message], { limit: memory.memory_size, tenantId: memory.tenant_id });
    } catch (err) {
      if (err instanceof MemoryFullError) throw tooLarge(memory, err.size);
      throw err;
    }
    const messageId = added.messageIds[0]!;
    const now = nowMs();
    await this.store.memories.createTask(memory.id, messageId, 'Queued: waiting for the extraction workflow', now);
    const result: TurnResult = { memory_id: memory.id, message_id: messageId };
    try {
      await this.tasks.startExtraction({ memoryId: memory.id, messageId });
    } catch (err) {
      result.task_error = `could not start the extraction workflow: ${(err as Error).message}`;
      await this.store.memories.updateTask(memory.id, messageId, -1, `Failed: ${result.task_error}`, nowMs());
    }
    return result;
  }

  async listMessages(p: Principal, memoryId: string, input: { agent_id?: string[]; keywords?: string; page: number; page_size: number; include_invalid?: boolean }) {
    const memory = await this.get(p, memoryId);
    const { total, messages, extracted } = await this.index.list(memory.id, {
      agentIds: splitList(input.agent_id),
      sessionKeywords: input.keywords,
      page: input.page,
      pageSize: input.page_size,
    });
    const all = [...messages, ...[...extracted.values()].flat()];
    const [tasks, agents] = await Promise.all([
      this.store.memories.tasks(memory.id, messages.filter((m) => m.message_type === 'raw').map((m) => m.message_id)),
      this.store.memories.agentTitles(all.map((m) => m.agent_id)),
    ]);
    const brief = (m: MemoryMessage) => ({ ...messageFields(m), agent_name: agents.get(m.agent_id) ?? '' });
    const now = nowMs();
    return {
      messages: {
        message_list: messages.map((m) => ({
          ...brief(m),
          ...(m.message_type === 'raw' ? { task: taskView(tasks.get(m.message_id)) } : {}),
          extract: (extracted.get(m.message_id) ?? []).filter((item) => input.include_invalid || isCurrent(item, now)).map(brief),
        })),
        total_count: total,
      },
      storage_type: memory.storage_type,
    };
  }

  /** A message with its full content and embedding vector. */
  async messageContent(p: Principal, memoryId: string, messageId: number) {
    const memory = await this.get(p, memoryId);
    const message = await this.requireMessage(memory, messageId);
    const view: Record<string, unknown> = { ...messageFields(message), content: message.content, content_embed: message.vector };
    if (message.message_type === 'raw') view.task = taskView(await this.store.memories.task(memory.id, messageId));
    return view;
  }

  /** Forgets a message: it stays readable and listed, is never retrieved, and goes first when FIFO needs room. */
  async forget(p: Principal, memoryId: string, messageId: number): Promise<void> {
    const memory = await this.get(p, memoryId);
    if (!(await this.index.forget(memory.id, messageId, nowMs()))) throw messageNotFound(memory.id, messageId);
  }

  async setStatus(p: Principal, memoryId: string, messageId: number, status: unknown): Promise<void> {
    if (typeof status !== 'boolean') throw badRequest('Status must be a boolean.');
    const memory = await this.get(p, memoryId);
    if (!(await this.index.setStatus(memory.id, messageId, status))) throw messageNotFound(memory.id, messageId);
  }

  /** search_message over memories the caller may manage; enabled, not-forgotten messages only. */
  async search(p: Principal, input: SearchInput) {
    const scored = await this.searchScored(p, input);
    if (!input.include_source) return scored.map(searchView);
    const sources = await sourceTurns(this.index, scored.map((s) => s.message));
    return scored.map((s) => ({ ...searchView(s), ...(s.message.message_type === 'raw' ? {} : { source: sources.get(s.message.message_id) ?? null }) }));
  }

  /** For the agent engine: search_message over the agent owner's memories. */
  async searchForAgent(tenantId: string | Principal, input: SearchInput) {
    return this.search(typeof tenantId === 'string' ? tenantPrincipal(tenantId) : tenantId, input);
  }

  private async searchScored(p: Principal, input: SearchInput): Promise<ScoredMessage[]> {
    const memories = await this.requireMemories(p, input.memory_ids);
    const models = [...new Set(memories.map((m) => `${m.tenant_id}\n${m.embd_id}`))];
    if (models.length > 1) {
      throw badRequest(`The memories use different embedding models (${memories.map((m) => `${m.name}: ${m.embd_id}`).join(', ')}); search memories of one embedding model at a time.`);
    }
    const embedder = await this.models.embedding(memories[0]!.tenant_id, memories[0]!.embd_id);
    return searchMessages(
      {
        query: input.query,
        filter: {
          memoryIds: memories.map((m) => m.id),
          agentId: input.agent_id || undefined,
          sessionId: input.session_id || undefined,
          userId: input.user_id || undefined,
          currentAt: input.include_invalid ? undefined : nowMs(),
        },
        similarity_threshold: input.similarity_threshold ?? SEARCH_DEFAULTS.similarity_threshold,
        keywords_similarity_weight: input.keywords_similarity_weight ?? SEARCH_DEFAULTS.keywords_similarity_weight,
        top_n: input.top_n ?? SEARCH_DEFAULTS.top_n,
        scope: searchScope({ valid_since: input.valid_since, valid_until: input.valid_until, message_type: splitList(input.message_type) }),
      },
      { index: this.index, embedQuery: async (text) => (await embedder.embed([text], 'query'))[0]! },
    );
  }

  /** get_recent_messages: most recent first; forgotten messages hidden (disabled ones are included). */
  async recent(p: Principal, input: RecentInput) {
    const memories = await this.requireMemories(p, input.memory_ids);
    const messages = await this.index.recent({
      memoryIds: memories.map((m) => m.id),
      agentId: input.agent_id || undefined,
      sessionId: input.session_id || undefined,
      currentAt: input.include_invalid ? undefined : nowMs(),
      limit: input.limit ?? 10,
    });
    return messages.map((m) => ({ ...messageFields(m), content: m.content }));
  }

  /**
   * Corrects an extracted item: the corrected text is stored as a new item of the same type, source, agent,
   * session and user (valid from now, embedded with the memory's model), and the old one gets invalid_at now and
   * replaced_by the new one; nothing is deleted, so include_invalid shows the history. Raw messages record what
   * was said and are not corrected; an item no longer current is corrected through the one that replaced it.
   */
  async correct(p: Principal, memoryId: string, messageId: number, content: unknown) {
    if (typeof content !== 'string' || !content.trim()) throw badRequest('`content` is required: the corrected text of the item.');
    const memory = await this.get(p, memoryId);
    const old = currentItem(await this.requireMessage(memory, messageId), 'corrected');
    const text = content.trim();
    const [vector] = await (await this.models.embedding(memory.tenant_id, memory.embd_id)).embed([text]);
    const size = messageSize(text, vector!.length);
    if (size > memory.memory_size) throw tooLarge(memory, size);
    const now = nowMs();
    const { messageIds } = await this.index.add(memory.id, [{
      message_type: old.message_type, source_id: old.source_id, user_id: old.user_id, agent_id: old.agent_id,
      session_id: old.session_id, content: text, vector: vector!, valid_at: now,
    }], { limit: memory.memory_size, tenantId: memory.tenant_id });
    const replacement = messageIds[0]!;
    await this.index.invalidate(memory.id, old.message_id, now, replacement);
    const stored = await this.requireMessage(memory, replacement);
    return { ...messageFields(stored), content: stored.content, replaces: old.message_id };
  }

  /** Retracts an extracted item: invalid_at now, nothing replaces it; it stays readable with include_invalid. */
  async retract(p: Principal, memoryId: string, messageId: number) {
    const memory = await this.get(p, memoryId);
    const old = currentItem(await this.requireMessage(memory, messageId), 'retracted');
    await this.index.invalidate(memory.id, old.message_id, nowMs(), null);
    const stored = await this.requireMessage(memory, old.message_id);
    return { ...messageFields(stored), content: stored.content };
  }

  private async requireMemories(p: Principal, ids: string[] | string): Promise<MemoryRow[]> {
    const memoryIds = splitList(ids);
    if (memoryIds.length === 0) throw badRequest('memory_ids is required.');
    return Promise.all(memoryIds.map((id) => this.get(p, id)));
  }

  private async requireMessage(memory: MemoryRow, messageId: number): Promise<MemoryMessage> {
    const message = await this.index.get(memory.id, messageId);
    if (!message) throw messageNotFound(memory.id, messageId);
    return message;
  }

  // ---------------------------------------------------------------- helpers

  /** A `model@factory` id naming a configured model of the type; the caller's spelling is kept. */
  private async checkModel(tenantId: string, raw: unknown, type: ModelType, field: string): Promise<string> {
    if (typeof raw !== 'string' || !raw.trim()) throw badRequest(`\`${field}\` is required: a ${type} model as <model_name>@<model_factory>.`);
    const id = raw.trim();
    if (id.length > MODEL_ID_MAX_LENGTH) throw badRequest(`\`${field}\` must be at most ${MODEL_ID_MAX_LENGTH} characters.`);
    try {
      parseModelId(id);
      await this.models.providers.resolve(tenantId, id, type);
    } catch (err) {
      throw badRequest(`\`${field}\` ${id}: ${(err as Error).message}`);
    }
    return id;
  }

  private async uniqueName(tenantId: string, name: string): Promise<string> {
    const taken = new Set(await this.store.memories.namesLike(tenantId, name.toLowerCase()));
    const free = firstFreeName(name, taken, MAX_MEMORY_NAME);
    if (free === undefined) throw badRequest(`Memory name '${name}' already exists.`);
    return free;
  }

  async view(row: MemoryRow) {
    return this.viewWith(row, await this.store.memories.ownerNames([row.tenant_id]));
  }

  private viewWith(r: MemoryRow, owners: Map<string, string>) {
    return {
      id: r.id,
      name: r.name,
      avatar: r.avatar,
      tenant_id: r.tenant_id,
      owner_name: owners.get(r.tenant_id) ?? '',
      memory_type: typesOf(r.memory_type),
      storage_type: r.storage_type,
      embd_id: r.embd_id,
      llm_id: r.llm_id,
      permission: r.permission,
      permissions: r.permission,
      description: r.description,
      memory_size: r.memory_size,
      forgetting_policy: r.forgetting_policy,
      temperature: r.temperature,
      system_prompt: r.system_prompt,
      user_prompt: r.user_prompt,
      create_time: toSeconds(r.create_time),
      create_date: toHttpDate(r.create_time),
      update_time: toSeconds(r.update_time),
      update_date: toHttpDate(r.update_time),
    };
  }
}

function safeModelName(id: string): string {
  return id.split('@')[0] ?? id;
}

function tooLarge(memory: MemoryRow, size: number): ApiError {
  return badRequest(`The message needs ${size} bytes (content bytes + embedding dimensions × 8), more than memory '${memory.name}' can hold (memory_size ${memory.memory_size} bytes).`);
}

function messageNotFound(memoryId: string, messageId: number): ApiError {
  return notFound(`Message '${messageId}' in memory '${memoryId}' not found.`);
}

/** The message, when it is an extracted item still current (what correct and retract act on); else a 400 saying why. */
function currentItem(m: MemoryMessage, action: string): MemoryMessage {
  if (m.message_type === 'raw') throw badRequest(`Message '${m.message_id}' is a raw message (what was said); only extracted items can be ${action}.`);
  if (!isCurrent(m, nowMs())) {
    const by = m.replaced_by !== null ? `; it was replaced by message '${m.replaced_by}'` : '';
    throw badRequest(`Message '${m.message_id}' is no longer current (invalid since ${new Date(m.invalid_at!).toISOString()})${by}.`);
  }
  return m;
}

/** The fields every message dict carries (times as Unix seconds). */
function messageFields(m: MemoryMessage) {
  return {
    message_id: m.message_id,
    message_type: m.message_type,
    source_id: m.source_id,
    memory_id: m.memory_id,
    user_id: m.user_id,
    agent_id: m.agent_id,
    session_id: m.session_id,
    valid_at: seconds(m.valid_at),
    invalid_at: seconds(m.invalid_at),
    replaced_by: m.replaced_by,
    forget_at: seconds(m.forget_at),
    status: m.status,
  };
}

function taskView(task: MemoryTaskRow | undefined) {
  return task ? { progress: task.progress, progress_msg: task.progress_msg } : { progress: 0, progress_msg: '' };
}

function searchView(s: ScoredMessage) {
  return {
    ...messageFields(s.message),
    valid_date: isoDate(s.message.valid_at),
    content: s.message.content,
    similarity: s.similarity,
    term_similarity: s.term_similarity,
    vector_similarity: s.vector_similarity,
  };
}
