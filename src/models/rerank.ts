import { DEFAULT_TIMEOUTS, requestJson, type Timeouts } from './http.js';
import { ModelError, type RerankModel } from './types.js';

export interface HttpRerankSettings {
  id: string;
  provider: string;
  /** Full endpoint URL, e.g. `http://127.0.0.1:9997/v1/rerank`. */
  url: string;
  model: string;
  apiKey?: string;
  timeouts?: Partial<Timeouts>;
  /** The fetch to call with (the outbound-address policy's); default the global one. */
  fetch?: typeof fetch;
}

interface RerankResponse {
  results?: { index: number; relevance_score?: number; score?: number }[];
  data?: { index: number; relevance_score?: number; score?: number }[];
}

/**
 * Providers differ: some return probabilities, others raw cross-encoder logits. Logits are squashed
 * with a sigmoid (monotonic, so the ranking is kept) to honour the 0..1 contract.
 */
export function toUnitInterval(scores: number[]): number[] {
  if (scores.every((s) => s >= 0 && s <= 1)) return scores;
  return scores.map((s) => 1 / (1 + Math.exp(-s)));
}

/** Client for the Jina/Cohere-style `POST /rerank` used by Xinference, vLLM, Jina, LocalAI, ... */
export class HttpRerankModel implements RerankModel {
  readonly id: string;
  private readonly timeouts: Timeouts;

  constructor(private readonly settings: HttpRerankSettings) {
    this.id = settings.id;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...settings.timeouts };
  }

  async rerank(query: string, documents: string[]): Promise<number[]> {
    if (documents.length === 0) return [];
    const { provider, url, model, apiKey, fetch } = this.settings;
    const res = await requestJson<RerankResponse>({
      provider,
      model,
      url,
      apiKey,
      timeouts: this.timeouts,
      fetch,
      body: { model, query, documents, top_n: documents.length, return_documents: false },
    });
    const results = res.results ?? res.data;
    if (!Array.isArray(results)) {
      throw new ModelError(`${provider}: rerank response from ${url} has no results`, provider, 500);
    }
    const scores = new Array<number>(documents.length).fill(0);
    for (const r of results) {
      const score = r.relevance_score ?? r.score;
      if (Number.isInteger(r.index) && r.index >= 0 && r.index < documents.length && Number.isFinite(score)) {
        scores[r.index] = score!;
      }
    }
    return toUnitInterval(scores);
  }

  async verify(): Promise<void> {
    await this.rerank('ping', ['pong']);
  }
}
