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
      const url = new URL(`${options.protocol}//${options.host ?? options.hostname}`);
      if (options.port) url.port = String(options.port);
      checkUrl(url, policy, component).then(
        (pinned) => connectTo({ ...options, hostname: pinned.address }, callback),
        (err: Error) => callback(err, null),
      );
    },
  });
  // undici's own fetch: its Agent is not guaranteed to fit the undici version bundled in Node's global fetch.
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}
