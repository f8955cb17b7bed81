/** Helpers shared by the benchmarks. */

/**
 * The benches' fake models listen on loopback, which the outbound-address policy refuses for ordinary users
 * (docs/input-limits.md); a bench's Cairn allows private addresses as a one-machine install would, as the
 * tests' harness does.
 */
export const LOOPBACK_MODELS_ENV = { CAIRN_ALLOW_PRIVATE_URLS: 'true' } as const;

/** The value after `--name` on the command line, or the fallback. */
export function argument(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** Nearest-rank percentile (p in 0..100); NaN for no values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Client-observed times of one streamed answer, in ms, from the request that was admitted. */
export interface StreamSample {
  ttft: number;
  total: number;
  /** 503s (admission control) waited out before the request was admitted. */
  refused: number;
  /** Epoch ms when the admitted request was sent (to line it up with server-side timestamps). */
  sentAtEpochMs: number;
}

/** The longest a bench waits for one request to be admitted before it gives up on it. */
const ADMISSION_PATIENCE_MS = 120_000;

/**
 * `fetch` as a polite client: a 503 (admission control refusing a request under load) is waited out
 * for its Retry-After (1 s when absent) and the request sent again, so a bench runs to the end under load
 * and reports the refusals instead of crashing on them.
 */
export async function fetchAdmitted(url: string, init: RequestInit): Promise<{ res: Response; refused: number; sentAt: number; sentAtEpochMs: number }> {
  const giveUpAt = performance.now() + ADMISSION_PATIENCE_MS;
  for (let refused = 0; ; refused++) {
    const sentAt = performance.now();
    const sentAtEpochMs = Date.now();
    const res = await fetch(url, init);
    if (res.status !== 503 || performance.now() > giveUpAt) return { res, refused, sentAt, sentAtEpochMs };
    const waitS = Number(res.headers.get('retry-after'));
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, (Number.isFinite(waitS) && waitS > 0 ? waitS : 1) * 1000));
  }
}

/**
 * Streams one SSE response. `inspect` sees each frame (matched as text, not parsed, so the client costs
 * little next to the server it measures) and says whether it carries answer text and whether it is the
 * last one. A 503 is waited out (fetchAdmitted); the times are those of the request that was admitted.
 */
export async function timeStream(url: string, headers: Record<string, string>, body: unknown, inspect: (frame: string) => { first?: boolean; last?: boolean }): Promise<StreamSample> {
  const { res, refused, sentAt: start, sentAtEpochMs } = await fetchAdmitted(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (!res.ok || !res.body) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let buffered = '';
  let ttft = NaN;
  let ended = false;
  for await (const bytes of res.body) {
    buffered += decoder.decode(bytes as Uint8Array, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const seen = inspect(frame);
      if (Number.isNaN(ttft) && seen.first) ttft = performance.now() - start;
      if (seen.last) ended = true;
    }
  }
  if (!ended || Number.isNaN(ttft)) throw new Error(`${url}: the stream ended without an answer`);
  return { ttft, total: performance.now() - start, refused, sentAtEpochMs };
}

/** One JSON call to Cairn's API (503s waited out); a non-zero envelope code throws with its message. */
export async function apiCall(url: string, method: string, body: unknown, auth?: string) {
  const { res } = await fetchAdmitted(url, { method, headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: auth } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as { code: number; data: any; message?: string };
  if (json.code !== 0) throw new Error(`${method} ${url}: ${json.message}`);
  return { json, res };
}
