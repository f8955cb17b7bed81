import type { ChatView, ChunkView, DatasetView, ListQuery, McpBackend, RetrieveQuery } from './backend.js';

/** The tools' backend for `cairn mcp`: a running Cairn's HTTP API, called with the user's API key. */
export class HttpBackend implements McpBackend {
  private readonly base: string;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
  }

  async listDatasets(query: ListQuery) {
    const envelope = await this.call<{ data: DatasetView[]; total: number }>('GET', '/datasets', listParams(query));
    return { total: envelope.total, datasets: envelope.data };
  }

  async listChats(query: ListQuery) {
    return (await this.call<{ data: { chats: ChatView[]; total: number } }>('GET', '/chats', listParams(query))).data;
  }

  async retrieve(input: RetrieveQuery) {
    const { data } = await this.call<{ data: { total: number; chunks: ChunkView[] } }>('POST', '/retrieval', undefined, input);
    return { total: data.total, chunks: data.chunks };
  }

  /** One API call; the envelope's error message becomes the thrown Error's. */
  private async call<T>(method: string, path: string, params?: URLSearchParams, body?: unknown): Promise<T> {
    const url = `${this.base}/api/v1${path}${params ? `?${params}` : ''}`;
    const headers: Record<string, string> = { Authorization: `Bearer ${this.apiKey}`, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new Error(`Cannot reach Cairn at ${this.base}: ${cause}`);
    }
    const text = await res.text();
    let envelope: { code?: number; message?: string };
    try {
      envelope = JSON.parse(text);
    } catch {
      throw new Error(`Cairn at ${this.base} answered ${method} ${path} with HTTP ${res.status} and a body that is not JSON`);
    }
    if (envelope.code !== 0) throw new Error(envelope.message ?? `Cairn answered ${method} ${path} with HTTP ${res.status}`);
    return envelope as T;
  }
}

function listParams(query: ListQuery): URLSearchParams {
  const params = new URLSearchParams({ page: String(query.page), page_size: String(query.page_size) });
  if (query.keywords) params.set('keywords', query.keywords);
  return params;
}
