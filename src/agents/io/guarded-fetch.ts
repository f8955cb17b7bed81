import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { checkUrl, type UrlPolicy } from './ssrf.js';

/**
 * A `fetch` that connects only to addresses the outbound-address policy accepted (ssrf.ts), for the
 * clients that bring their own HTTP stack (the OpenAI SDK, the MCP SDK, the provider clients).
 *
 * Every new connection, a redirect's included, resolves its host once, runs the policy on every
 * address of that answer, and then connects to the first one: the check and the connect use the same
 * DNS answer, so a name that resolves differently a moment later (DNS rebinding) cannot reach a
 * private address. The Host header and TLS SNI (and certificate check) keep the name. A refusal fails
 * the request with the SsrfError (as the `cause` of fetch's "fetch failed"; ssrf.ts refusalOf finds it).
 */
export function guardedFetch(policy: UrlPolicy, component: string): typeof fetch {
  const connectTo = buildConnector({});
  const dispatcher = new Agent({
    connect: (options, callback) => {
      void (async () => {
        let pinned;
        try {
          // `host` keeps IPv6 brackets (and the port, when not the scheme's default); `hostname` has none.
          const url = new URL(`${options.protocol}//${options.host ?? options.hostname}`);
          if (options.port) url.port = String(options.port);
          pinned = await checkUrl(url, policy, component);
        } catch (err) {
          return callback(err as Error, null);
        }
        // Only the address to dial changes: `host` (and so TLS SNI and the certificate check) stays the name.
        connectTo({ ...options, hostname: pinned.address }, callback);
      })();
    },
  });
  // undici's own fetch: its Agent is not guaranteed to fit the undici version bundled in Node's global fetch.
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}
