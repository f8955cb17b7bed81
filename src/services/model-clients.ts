import { createModel } from '../models/registry.js';
import type { ChatModel, EmbeddingModel, RerankModel } from '../models/types.js';
import type { ProviderService, ResolvedModel } from './providers.js';

/** Default bound of the cache (CAIRN_CACHE_MODEL_CLIENTS). */
export const DEFAULT_MODEL_CLIENTS = 256;

/**
 * Model clients for a tenant's configured models, built once per distinct configuration and kept while
 * among the `maxClients` most recently used (a client dropped is built again when next needed).
 */
export class ModelClients {
  /** Least recently used first. */
  private readonly cache = new Map<string, ChatModel | EmbeddingModel | RerankModel>();

  constructor(
    readonly providers: ProviderService,
    private readonly maxClients = DEFAULT_MODEL_CLIENTS,
  ) {
    if (!Number.isInteger(maxClients) || maxClients < 1) throw new Error(`ModelClients needs room for at least one client (got ${maxClients})`);
  }

  /** Clients built and kept (one per distinct model configuration). */
  get size(): number {
    return this.cache.size;
  }

  async embedding(tenantId: string, modelId: string): Promise<EmbeddingModel> {
    return (await this.client(tenantId, await this.providers.resolve(tenantId, modelId, 'embedding'))) as EmbeddingModel;
  }

  async chat(tenantId: string, modelId?: string | null): Promise<ChatModel> {
    const resolved = modelId ? await this.providers.resolve(tenantId, modelId, 'chat') : await this.providers.resolveDefault(tenantId, 'chat');
    return (await this.client(tenantId, resolved)) as ChatModel;
  }

  async rerank(tenantId: string, modelId: string): Promise<RerankModel> {
    return (await this.client(tenantId, await this.providers.resolve(tenantId, modelId, 'rerank'))) as RerankModel;
  }

  /** The client of a resolved model, its base URL checked against the outbound-address policy first (every time: DNS can change). */
  private async client(tenantId: string, m: ResolvedModel) {
    const fetch = await this.providers.checkCallUrl(tenantId, m);
    // A client calls through the fetch it was built with: one behind the address policy is not shared with a trusted one.
    const key = JSON.stringify([m.factory, m.model_name, m.model_type, m.base_url, m.api_key, fetch === undefined || fetch === globalThis.fetch]);
    let c = this.cache.get(key);
    if (c) {
      this.cache.delete(key);
    } else {
      c = createModel({ factory: m.factory, model_name: m.model_name, model_type: m.model_type, base_url: m.base_url, api_key: m.api_key, id: m.id, fetch });
      if (this.cache.size >= this.maxClients) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(key, c);
    return c;
  }
}
