import { checkUrl, SsrfError, type UrlPolicy } from '../agents/io/ssrf.js';
import { guardedFetch } from '../agents/io/guarded-fetch.js';
import { badRequest } from '../errors.js';

/**
 * The one outbound-address policy for every URL Cairn calls on a user's word: model provider base URLs,
 * MCP servers (and agents' Invoke, which applies the same UrlPolicy itself, pinned to the checked address).
 * A refusal is a 400 naming the address and the settings that would allow it.
 *
 * Resolves to the `fetch` to call the URL with: one that connects only to addresses the policy accepts,
 * checked again on every new connection (guarded-fetch.ts), so DNS that changes after this check cannot
 * redirect the call; the plain fetch when nothing is checked.
 */
export type OutboundGuard = (url: string, what: string, options?: { trusted?: boolean }) => Promise<typeof fetch>;

/**
 * `trusted`: the installation's admin registering or calling its own servers (a local model server on
 * another port, say): only the scheme is checked. With CAIRN_ALLOW_PRIVATE_URLS nothing is resolved either.
 */
export function outboundGuard(policy: UrlPolicy): OutboundGuard {
  // One guarded fetch (and its connection pool) per label: the label names the caller in refusals.
  const fetches = new Map<string, typeof fetch>();
  const fetchFor = (what: string) => {
    let f = fetches.get(what);
    if (!f) fetches.set(what, (f = guardedFetch(policy, what)));
    return f;
  };
  return async (url, what, options) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw badRequest(`${what}: not a URL: ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest(`${what}: only http and https URLs are allowed, not ${parsed.protocol.replace(/:$/, '')}`);
    if (policy.allowPrivate || options?.trusted) return fetch;
    try {
      await checkUrl(parsed, policy, what);
    } catch (err) {
      throw err instanceof SsrfError ? badRequest(err.message) : err;
    }
    return fetchFor(what);
  };
}
