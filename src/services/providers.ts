import type { MetaStore } from '../store/index.js';
import type { DefaultKind, InstanceRow, ModelRow } from '../store/providers.js';
import { parseModelId } from '../models/model-id.js';
import { newId } from '../ids.js';
import { nowMs, toSeconds } from '../time.js';
import { badRequest, notFound } from '../errors.js';
import { BUILTIN_CHAT_MODEL, BUILTIN_EMBEDDING_MODEL, type ModelCatalog } from './model-catalog.js';
import { createModel, findFactory, listFactories } from '../models/registry.js';
import { BUILTIN_EMBEDDING_SPECS, BUILTIN_FACTORY, builtinChatSpecFor, builtinSpecFor } from '../models/builtin/spec.js';
import { promptBudget } from '../models/builtin/chat-protocol.js';
import { builtinModelSettings } from '../models/builtin/settings.js';
import type { Principal } from './auth.js';
import type { OutboundGuard } from './outbound-urls.js';

export type ModelType = 'chat' | 'embedding' | 'rerank';
export const MODEL_TYPES: ModelType[] = ['chat', 'embedding', 'rerank'];

/** A configurable provider kind (the built-in one needs no configuration). */
function configurableFactory(name: string) {
  const f = findFactory(name);
  return f && f.kind !== 'builtin' ? f : undefined;
}


/** Everything needed to build a model client. */
export interface ResolvedModel {
  id: string;
  factory: string;
  model_name: string;
  model_type: ModelType;
  base_url: string;
  api_key: string;
  vision: boolean;
  max_tokens: number;
}

export interface ModelInfoInput {
  model_name: string;
  model_type: string | string[];
  max_tokens?: number;
  vision?: boolean;
}

const DEFAULT_KIND: Record<ModelType, DefaultKind> = { chat: 'chat_model', embedding: 'embedding_model', rerank: 'rerank_model' };

/** Model providers, their instances and models, and per-tenant default models. */
export class ProviderService implements ModelCatalog {
  constructor(
    private readonly store: MetaStore,
    /** The outbound-address policy (outbound-urls.ts): base URLs are checked at registration and at every call. */
    private readonly guard: OutboundGuard,
  ) {}

  listFactories() {
    return listFactories().map((f) => ({ name: f.name, model_types: f.types, base_url_required: !f.defaultBaseUrl && f.name !== BUILTIN_FACTORY, default_base_url: f.defaultBaseUrl ?? null }));
  }

  async createInstance(p: Principal, factory: string, input: { instance_name: string; api_key?: string; base_url?: string; model_info?: ModelInfoInput[] }) {
    const f = requireFactory(factory);
    factory = f.name;
    const name = input.instance_name.trim();
    if (!name) throw badRequest('`instance_name` is required');
    if (name === 'default') throw badRequest("instance_name cannot be 'default'");
    const baseUrl = normaliseBaseUrl(input.base_url ?? '');
    if (!f.defaultBaseUrl && !baseUrl) throw badRequest(`\`base_url\` is required for provider ${factory}`);
    if (await this.store.providers.instance(p.tenantId, factory, name)) throw badRequest(`Instance '${name}' of provider ${factory} already exists`);
    if (baseUrl) await this.checkBaseUrl(factory, baseUrl, p.isAdmin);
    const now = nowMs();
    const row: InstanceRow = { id: newId(), tenant_id: p.tenantId, factory, instance_name: name, api_key: input.api_key ?? '', base_url: baseUrl, create_time: now, update_time: now };
    await this.store.providers.insertInstance(row, modelRows(row.id, input.model_info ?? [], now));
    return this.instanceView(row);
  }

  async listInstances(p: Principal, factory: string) {
    factory = requireFactory(factory).name;
    const rows = await this.store.providers.instances(p.tenantId, factory);
    return Promise.all(rows.map((r) => this.instanceView(r)));
  }

  async getInstance(p: Principal, factory: string, name: string) {
    return this.instanceView(await this.requireInstance(p, factory, name));
  }

  async updateInstance(p: Principal, factory: string, name: string, input: { api_key?: string; base_url?: string; model_info?: ModelInfoInput[] }) {
    const row = await this.requireInstance(p, factory, name);
    const now = nowMs();
    const patch: Partial<InstanceRow> = { update_time: now };
    if (input.api_key !== undefined) patch.api_key = input.api_key;
    if (input.base_url !== undefined) patch.base_url = normaliseBaseUrl(input.base_url);
    if (patch.base_url) await this.checkBaseUrl(row.factory, patch.base_url, p.isAdmin);
    // Everything is checked before anything is written, and written in one transaction: a refused update changes nothing.
    await this.store.providers.updateInstance(row.id, patch, modelRows(row.id, input.model_info ?? [], now));
    return this.getInstance(p, factory, name);
  }

  async deleteInstance(p: Principal, factory: string, name: string): Promise<void> {
    await this.store.providers.deleteInstance((await this.requireInstance(p, factory, name)).id);
  }

  async addModels(p: Principal, factory: string, name: string, models: ModelInfoInput[]) {
    const row = await this.requireInstance(p, factory, name);
    const now = nowMs();
    await this.store.providers.upsertModels(modelRows(row.id, models, now));
    return this.getInstance(p, factory, name);
  }

  async deleteModel(p: Principal, factory: string, name: string, modelName: string): Promise<void> {
    const row = await this.requireInstance(p, factory, name);
    if ((await this.store.providers.deleteModel(row.id, modelName)) === 0) throw notFound(`Model ${modelName} not found in instance ${name} of ${factory}`);
  }

  /**
   * Checks that the provider answers and knows the model (Ollama: the model is pulled). Nothing is stored.
   * A wrong base URL fails fast with the provider's connection-refused error.
   */
  async checkConnection(p: Principal, factory: string, input: { base_url?: string; api_key?: string; model_name: string; model_type: ModelType }) {
    const f = requireFactory(factory);
    const baseUrl = normaliseBaseUrl(input.base_url ?? '');
    // The connection goes through the policy's fetch: the check above and the connect use the same address.
    const fetch = baseUrl ? await this.checkBaseUrl(f.name, baseUrl, p.isAdmin) : undefined;
    const client = createModel({ factory: f.name, model_name: input.model_name, model_type: input.model_type, base_url: input.base_url, api_key: input.api_key, fetch });
    // The base URL and model here are the caller's input: a failure is a bad request, named by the provider.
    await client.verify?.().catch((err: Error) => {
      throw badRequest(err.message);
    });
    return { provider_name: f.name, model_name: input.model_name, model_type: input.model_type, status: 'ok' };
  }

  /** Every model the tenant can select, the built-in chat and embedding models included. */
  async listModels(tenantId: string, type?: ModelType) {
    const instances = await this.store.providers.instances(tenantId);
    const byId = new Map(instances.map((i) => [i.id, i]));
    const models = await this.store.providers.models(instances.map((i) => i.id));
    const out = [
      { model_id: BUILTIN_CHAT_MODEL, name: BUILTIN_CHAT_MODEL.split('@')[0], provider_name: BUILTIN_FACTORY, instance_name: 'default', model_type: ['chat'], vision: false, max_tokens: builtinModelSettings().chat.contextSize },
      ...BUILTIN_EMBEDDING_SPECS.map((spec) => ({ model_id: `${spec.name}@${BUILTIN_FACTORY}`, name: spec.name, provider_name: BUILTIN_FACTORY, instance_name: 'default', model_type: ['embedding'], vision: false, max_tokens: spec.maxTokens })),
      ...models.map((m) => {
        const inst = byId.get(m.instance_id)!;
        return {
          model_id: `${m.model_name}@${inst.instance_name}@${inst.factory}`,
          name: m.model_name,
          provider_name: inst.factory,
          instance_name: inst.instance_name,
          model_type: JSON.parse(m.model_types) as string[],
          vision: m.vision === 1,
          max_tokens: m.max_tokens,
        };
      }),
    ];
    return type ? out.filter((m) => m.model_type.includes(type)) : out;
  }

  async getDefaults(tenantId: string) {
    const row = await this.store.providers.defaults(tenantId);
    return {
      // Until the tenant chooses one, chat runs on the built-in model (no provider needed).
      chat_model: row?.chat_model ?? BUILTIN_CHAT_MODEL,
      embedding_model: row?.embedding_model ?? BUILTIN_EMBEDDING_MODEL,
      rerank_model: row?.rerank_model ?? null,
    };
  }

  /**
   * RAGFlow's `GET /users/me/models`: the tenant's model settings (`llm_id`, `embd_id`, `rerank_id`, ... — the
   * built-in models until the tenant chooses others) plus `models`, every model it can select (built-ins included).
   */
  async tenantModels(p: Principal) {
    const defaults = await this.getDefaults(p.tenantId);
    return {
      tenant_id: p.tenantId,
      name: `${p.nickname}'s Kingdom`,
      llm_id: defaults.chat_model,
      embd_id: defaults.embedding_model,
      rerank_id: defaults.rerank_model ?? '',
      asr_id: '',
      img2txt_id: '',
      tts_id: null,
      parser_ids: 'naive:General,qa:Q&A,table:Table,one:One,manual:Manual,paper:Paper,book:Book,laws:Laws,presentation:Presentation,picture:Picture,email:Email,tag:Tag',
      role: 'owner',
      models: await this.listModels(p.tenantId),
    };
  }

  async setDefault(tenantId: string, type: ModelType, modelId: string | null) {
    const canonical = modelId ? (await this.resolve(tenantId, modelId, type)).id : null;
    await this.store.providers.setDefault(tenantId, DEFAULT_KIND[type], canonical, nowMs());
    return this.getDefaults(tenantId);
  }

  /** Finds a configured model of the given type; throws 400 naming what is wrong. */
  async resolve(tenantId: string, modelId: string, type: ModelType): Promise<ResolvedModel> {
    const id = parseModelId(modelId);
    if (id.factory.toLowerCase() === BUILTIN_FACTORY.toLowerCase()) {
      const spec = builtinSpecFor(id.name);
      if (spec && type === 'embedding') {
        return { id: `${spec.name}@${BUILTIN_FACTORY}`, factory: BUILTIN_FACTORY, model_name: spec.name, model_type: 'embedding', base_url: '', api_key: '', vision: false, max_tokens: spec.maxTokens };
      }
      const chat = builtinChatSpecFor(id.name);
      if (chat && type === 'chat') {
        // max_tokens is what a prompt may fill (chat history is cut to fit): the context less room for the answer.
        return { id: `${chat.name}@${BUILTIN_FACTORY}`, factory: BUILTIN_FACTORY, model_name: chat.name, model_type: 'chat', base_url: '', api_key: '', vision: false, max_tokens: promptBudget(builtinModelSettings().chat) };
      }
      throw badRequest(`Model ${modelId} not found for model type ${type}: the built-in provider offers ${BUILTIN_CHAT_MODEL} (chat) and ${BUILTIN_EMBEDDING_SPECS.map((s) => `${s.name}@${BUILTIN_FACTORY}`).join(', ')} (embedding)`);
    }
    const instances = (await this.store.providers.instances(tenantId, findFactory(id.factory)?.name ?? id.factory)).filter((i) => !id.instance || i.instance_name === id.instance);
    if (instances.length === 0) throw badRequest(`Provider ${id.factory}${id.instance ? ` (instance ${id.instance})` : ''} not found for model ${modelId}`);
    const models = await this.store.providers.models(instances.map((i) => i.id));
    const model = models.find((m) => m.model_name === id.name && (JSON.parse(m.model_types) as string[]).includes(type));
    if (!model) throw badRequest(`Model ${modelId} not found for model type ${type}`);
    const inst = instances.find((i) => i.id === model.instance_id)!;
    return {
      id: `${model.model_name}@${inst.instance_name}@${inst.factory}`,
      factory: inst.factory,
      model_name: model.model_name,
      model_type: type,
      base_url: inst.base_url,
      api_key: inst.api_key,
      vision: model.vision === 1,
      max_tokens: model.max_tokens,
    };
  }

  /** The default chat model the tenant chose (PATCH /models/default), or undefined while it runs on the built-in one unasked. */
  async chosenChatModel(tenantId: string): Promise<string | undefined> {
    return (await this.store.providers.defaults(tenantId))?.chat_model ?? undefined;
  }

  /** The tenant's default model of a type (chat: the built-in model unless set), resolved; throws 400 when none is set. */
  async resolveDefault(tenantId: string, type: ModelType): Promise<ResolvedModel> {
    const defaults = await this.getDefaults(tenantId);
    const id = defaults[DEFAULT_KIND[type]];
    if (!id) throw badRequest(`No default ${type} model is set: configure one with PATCH /api/v1/models/default`);
    return this.resolve(tenantId, id, type);
  }

  async defaultEmbeddingModel(tenantId: string): Promise<string> {
    return (await this.getDefaults(tenantId)).embedding_model;
  }

  async checkEmbeddingModel(tenantId: string, modelId: string): Promise<string> {
    const resolved = await this.resolve(tenantId, modelId, 'embedding').catch((err: Error) => {
      throw badRequest(`\`embedding_model\` ${modelId}: ${err.message}`);
    });
    // Keep the caller's spelling when it names the same model (2-part ids stay 2-part).
    return resolved.id === modelId || `${resolved.model_name}@${resolved.factory}` === modelId ? modelId : resolved.id;
  }

  /**
   * Checks a resolved model's base URL against the outbound-address policy before a call: the name is
   * resolved again each time, since what it points to can change after registration. Instances of the
   * installation admin's own workspace are trusted, as at registration. Returns the fetch the model's
   * client must call with (it connects only to addresses the policy accepts), or undefined for a
   * built-in default base URL.
   */
  async checkCallUrl(tenantId: string, model: ResolvedModel): Promise<typeof fetch | undefined> {
    if (!model.base_url) return undefined;
    const owner = await this.store.users.byId(tenantId);
    return this.checkBaseUrl(model.factory, model.base_url, owner?.is_admin === 1);
  }

  /** A base URL the caller gave (the built-in default ones are not checked): the installation's admin may name local servers. */
  private checkBaseUrl(factory: string, baseUrl: string, isAdmin: boolean): Promise<typeof fetch> {
    return this.guard(baseUrl, `Model provider ${factory} base URL`, { trusted: isAdmin });
  }

  private async requireInstance(p: Principal, factory: string, name: string): Promise<InstanceRow> {
    factory = requireFactory(factory).name;
    const row = await this.store.providers.instance(p.tenantId, factory, name);
    if (!row) throw notFound(`Instance '${name}' of provider ${factory} not found`);
    return row;
  }

  private async instanceView(row: InstanceRow) {
    const models = await this.store.providers.models([row.id]);
    return {
      id: row.id,
      provider_name: row.factory,
      instance_name: row.instance_name,
      base_url: row.base_url,
      api_key: maskSecret(row.api_key),
      models: models.map((m) => ({ model_name: m.model_name, model_type: JSON.parse(m.model_types), max_tokens: m.max_tokens, vision: m.vision === 1 })),
      create_time: toSeconds(row.create_time),
      update_time: toSeconds(row.update_time),
    };
  }
}

function requireFactory(factory: string) {
  const f = configurableFactory(factory);
  if (!f) throw notFound(`Provider ${factory} not found; configurable providers: ${listFactories().filter((x) => x.name !== BUILTIN_FACTORY).map((x) => x.name).join(', ')}`);
  return f;
}

/** The rows of `models`, every one checked first (so a refused request writes none), each name once. */
function modelRows(instanceId: string, models: ModelInfoInput[], now: number) {
  const rows = models.map((m) => modelRow(instanceId, m, now));
  const names = rows.map((r) => r.model_name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw badRequest(`model_info names the model '${twice}' more than once: give each model once`);
  return rows;
}

function modelRow(instanceId: string, m: ModelInfoInput, now: number): ModelRow {
  const types = (Array.isArray(m.model_type) ? m.model_type : [m.model_type]).map((t) => (t === 'image2text' ? 'chat' : t));
  for (const t of types) if (!MODEL_TYPES.includes(t as ModelType)) throw badRequest(`\`model_type\` ${t} is not one of ${MODEL_TYPES.join(', ')}`);
  if (!m.model_name?.trim()) throw badRequest('`model_name` is required');
  if (m.model_name.includes('@')) throw badRequest('`model_name` must not contain @');
  const vision = m.vision === true || (Array.isArray(m.model_type) ? m.model_type : [m.model_type]).includes('image2text');
  return { id: newId(), instance_id: instanceId, model_name: m.model_name.trim(), model_types: JSON.stringify([...new Set(types)]), max_tokens: m.max_tokens ?? 8192, vision: vision ? 1 : 0, create_time: now };
}

function normaliseBaseUrl(url: string): string {
  const trimmed = url.trim().replace(/\/+$/, '');
  if (trimmed && !/^https?:\/\/[^\s/]+/.test(trimmed)) throw badRequest(`\`base_url\` must be an http(s) URL; got '${url}'`);
  return trimmed;
}

/** Secrets are never returned in full: the first 3 and last 4 characters at most. */
export function maskSecret(secret: string): string {
  if (!secret) return '';
  if (secret.length <= 8) return '*'.repeat(secret.length);
  return `${secret.slice(0, 3)}…${secret.slice(-4)}`;
}
