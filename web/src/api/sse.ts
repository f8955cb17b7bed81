import { apiUrl, authHeaders, errorFrom, reportUnauthorized } from './http.js';

/**
 * POSTs a JSON body and yields each server-sent event's `data` (parsed JSON) as it arrives, until
 * `[DONE]` or the end of the stream. An answer that is not a stream (a 4xx/5xx envelope) throws its
 * message. EventSource cannot POST or send headers, hence fetch and a reader.
 */
export async function* postSse(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<any> {
  const res = await fetch(apiUrl(path), {
    method: 'POST',
    headers: { ...authHeaders(), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await res.text();
    const err = errorFrom(res.status, text);
    if (!res.ok || err.code !== 0) {
      reportUnauthorized(err);
      throw err;
    }
    yield JSON.parse(text);
    return;
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = blocks.pop() ?? '';
    for (const block of blocks) {
      const payload = dataOf(block);
      if (payload === undefined) continue;
      if (payload === '[DONE]') return;
      yield JSON.parse(payload);
    }
  }
  const rest = dataOf(buffer);
  if (rest !== undefined && rest !== '[DONE]') yield JSON.parse(rest);
}

function dataOf(block: string): string | undefined {
  const lines = block.split(/\r?\n/).filter((l) => l.startsWith('data:'));
  if (!lines.length) return undefined;
  return lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n').trim();
}
