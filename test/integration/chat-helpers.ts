import assert from 'node:assert/strict';
import { Api, newUser } from './client.js';
import { upload, waitForRun } from './documents-helpers.js';

export const FACTORY = 'OpenAI-API-Compatible';

/**
 * Registers an OpenAI-compatible model server (a fake) as a provider instance of the user's tenant
 * through the providers API; `chat` becomes the tenant's default chat model. Returns the model id.
 */
export async function addModelServer(api: Api, baseUrl: string, options: { instance?: string; chat?: string; embedding?: string; setDefault?: boolean } = {}): Promise<string> {
  const instance = options.instance ?? 'fake';
  const chat = options.chat ?? 'fake-chat';
  const model_info = [{ model_name: chat, model_type: 'chat', max_tokens: 8192 }];
  if (options.embedding) model_info.push({ model_name: options.embedding, model_type: 'embedding', max_tokens: 512 });
  const res = await api.post(`/providers/${FACTORY}/instances`, { instance_name: instance, base_url: baseUrl, api_key: 'sk-fake', model_info });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const modelId = `${chat}@${instance}@${FACTORY}`;
  if (options.setDefault ?? true) {
    const def = await api.patch('/models/default', { model_type: 'chat', model_id: modelId });
    assert.equal(def.status, 200, JSON.stringify(def.body));
  }
  return modelId;
}

/** A fresh tenant whose default chat model is served by `baseUrl`. */
export async function userWithModel(name: string, baseUrl: string) {
  const user = await newUser(name);
  const modelId = await addModelServer(user.api, baseUrl);
  return { ...user, modelId };
}

export async function createChat(api: Api, body: Record<string, unknown>) {
  const res = await api.post('/chats', body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** A dataset with one parsed document per text (parsing runs on the real worker with the built-in embedding model). */
export async function parsedDataset(api: Api, name: string, texts: Record<string, string>) {
  const ds = await api.post('/datasets', { name });
  assert.equal(ds.status, 200, JSON.stringify(ds.body));
  const id: string = ds.body.data.id;
  const up = await upload(api, id, Object.entries(texts).map(([file, text]) => ({ name: file, bytes: Buffer.from(text) })));
  assert.equal(up.status, 200, JSON.stringify(up.body));
  const docs: { id: string; name: string }[] = up.body.data;
  const parse = await api.post(`/datasets/${id}/chunks`, { document_ids: docs.map((d) => d.id) });
  assert.equal(parse.status, 200, JSON.stringify(parse.body));
  for (const d of docs) assert.equal((await waitForRun(api, id, d.id)).run, 'DONE');
  return { id, docs: Object.fromEntries(docs.map((d) => [d.name, d.id])) as Record<string, string> };
}

/**
 * A dataset holding one document with one chunk added directly (no parse run): enough for a chat
 * assistant to accept it, as RAGFlow refuses datasets with no parsed file.
 */
export async function datasetWithChunk(api: Api, body: Record<string, unknown>, content = 'Granite cairns mark the summit trail.') {
  const ds = await api.post('/datasets', body);
  assert.equal(ds.status, 200, JSON.stringify(ds.body));
  const id: string = ds.body.data.id;
  const up = await upload(api, id, [{ name: 'note.txt', bytes: Buffer.from(content) }]);
  assert.equal(up.status, 200, JSON.stringify(up.body));
  const chunk = await api.post(`/datasets/${id}/documents/${up.body.data[0].id}/chunks`, { content });
  assert.equal(chunk.status, 200, JSON.stringify(chunk.body));
  return ds.body.data;
}

export interface SseResult {
  status: number;
  headers: Headers;
  raw: string;
  /** Parsed `data:` payloads; `[DONE]` stays a string. A non-SSE answer gives no frames. */
  frames: any[];
  /** The JSON body when the answer was not a stream. */
  json?: any;
}

/** Reads an SSE body frame by frame as it arrives (JSON payloads parsed, `[DONE]` as the string). */
export async function* sseFrames(res: Response): AsyncGenerator<any> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut).trim();
      buffer = buffer.slice(cut + 2);
      if (!block.startsWith('data:')) continue;
      const payload = block.slice(5).trim();
      yield payload === '[DONE]' ? payload : JSON.parse(payload);
    }
  }
}

/** POSTs a JSON body and reads the whole answer as server-sent events. */
export async function postSse(api: Api, path: string, body: unknown): Promise<SseResult> {
  const res = await fetch(new URL('/api/v1' + path, api.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const raw = await res.text();
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return { status: res.status, headers: res.headers, raw, frames: [], json: JSON.parse(raw) };
  const frames = raw
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      assert.ok(block.startsWith('data:'), `not an SSE data frame: ${block}`);
      const payload = block.slice('data:'.length).trim();
      return payload === '[DONE]' ? payload : JSON.parse(payload);
    });
  return { status: res.status, headers: res.headers, raw, frames };
}
