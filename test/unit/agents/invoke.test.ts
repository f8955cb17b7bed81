import assert from 'node:assert/strict';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { runInvoke, cleanHtml, type InvokeOptions } from '../../../src/agents/io/invoke.js';
import { checkUrl, nonPublicKind } from '../../../src/agents/io/ssrf.js';
import { loadConfig } from '../../../src/config.js';

/** Every request the test server saw. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Only ever 127.0.0.1: the tests never send anything to any other address. */
async function startServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ server: Server; base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const never = new AbortController().signal;
const allowed: InvokeOptions = { allowPrivate: true };
const guarded: InvokeOptions = { allowPrivate: false };

describe('agents: Invoke and its SSRF guard', () => {
  let server: Server;
  let base: string;
  let seen: Seen[];

  before(async () => {
    ({ server, base, seen } = await startServer((req, res, body) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/echo') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ method: req.method, query: url.search, body }));
      } else if (url.pathname === '/html') {
        res.setHeader('Content-Type', 'text/html; charset=utf-8');
        res.end('<html><head><title>Page</title><style>p{color:red}</style><script>var x = 1;</script></head><body><h1>Hello</h1><p>one <b>two</b></p></body></html>');
      } else if (url.pathname === '/slow') {
        setTimeout(() => res.end('late'), 3000).unref();
      } else if (url.pathname === '/redirect') {
        res.statusCode = 302;
        res.setHeader('Location', '/echo?from=redirect');
        res.end();
      } else if (url.pathname === '/redirect-out') {
        res.statusCode = 302;
        res.setHeader('Location', 'http://10.0.0.1/inside');
        res.end();
      } else if (url.pathname === '/gzip') {
        res.setHeader('Content-Encoding', 'gzip');
        res.end(gzipSync(Buffer.from('compressed answer')));
      } else if (url.pathname === '/status') {
        res.statusCode = 503;
        res.end('service unavailable');
      } else if (url.pathname === '/big') {
        res.end(Buffer.alloc(2048, 'a'));
      } else {
        res.statusCode = 404;
        res.end('not found');
      }
    }));
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => (seen.length = 0));

  describe('SSRF guard', () => {
    it('refuses a loopback address by default, naming the address and the setting', async () => {
      await assert.rejects(runInvoke({ url: `${base}/echo` }, never, guarded), {
        name: 'InvokeError',
        message: 'Invoke: 127.0.0.1 is a loopback address; set CAIRN_ALLOW_PRIVATE_URLS=true (or list it in CAIRN_PRIVATE_URL_ALLOWLIST, e.g. 127.0.0.1:' + new URL(base).port + ') to allow it',
      });
      assert.equal(seen.length, 0, 'nothing reached the server');
    });

    it('allows a loopback address when CAIRN_ALLOW_PRIVATE_URLS is set', async () => {
      const out = await runInvoke({ url: `${base}/echo` }, never, allowed);
      assert.equal(JSON.parse(String(out.result)).method, 'GET');
    });

    it('reads CAIRN_ALLOW_PRIVATE_URLS and CAIRN_PRIVATE_URL_ALLOWLIST from the environment (off by default; the allowlist holds the local Ollama and Xinference ports)', () => {
      assert.equal(loadConfig({}).allowPrivateUrls, false);
      assert.deepEqual(loadConfig({}).privateUrlAllowList, ['127.0.0.1:11434', '[::1]:11434', '127.0.0.1:9997', '[::1]:9997']);
      assert.equal(loadConfig({ CAIRN_ALLOW_PRIVATE_URLS: 'true' }).allowPrivateUrls, true);
      assert.deepEqual(loadConfig({ CAIRN_PRIVATE_URL_ALLOWLIST: '10.0.0.0/8, intranet.local' }).privateUrlAllowList, ['10.0.0.0/8', 'intranet.local']);
    });

    it('refuses a hostname that resolves to a private address, after resolving it and before connecting', async () => {
      let asked = '';
      const resolve = async (host: string) => ((asked = host), [{ address: '10.1.2.3', family: 4 as const }]);
      await assert.rejects(runInvoke({ url: 'http://intranet.example/api' }, never, { allowPrivate: false, resolve }), {
        message: /^Invoke: intranet\.example resolves to 10\.1\.2\.3, which is a private address; set CAIRN_ALLOW_PRIVATE_URLS=true/,
      });
      assert.equal(asked, 'intranet.example');
    });

    it('refuses a hostname when any one of its addresses is not public', async () => {
      const resolve = async () => [
        { address: '93.184.216.34', family: 4 as const },
        { address: '::1', family: 6 as const },
      ];
      await assert.rejects(runInvoke({ url: 'http://mixed.example/' }, never, { allowPrivate: false, resolve }), { message: /resolves to ::1, which is a loopback address/ });
    });

    it('connects to the address it checked, not to a second answer of the resolver (DNS pinning)', async () => {
      // First answer: the test server (allowed by the allow-list); any later lookup would answer a refused address.
      let calls = 0;
      const resolve = async () => (calls++ === 0 ? [{ address: '127.0.0.1', family: 4 as const }] : [{ address: '10.9.9.9', family: 4 as const }]);
      const port = new URL(base).port;
      const out = await runInvoke({ url: `http://rebind.test:${port}/echo` }, never, { allowPrivate: false, allowList: ['rebind.test'], resolve });
      assert.equal(JSON.parse(String(out.result)).method, 'GET');
      assert.equal(calls, 1, 'the name was resolved once');
      assert.equal(seen[0]!.headers.host, `rebind.test:${port}`, 'the Host header keeps the name');
    });

    it('allows listed hosts and address ranges (CAIRN_PRIVATE_URL_ALLOWLIST) and nothing else', async () => {
      assert.ok(await runInvoke({ url: `${base}/echo` }, never, { allowPrivate: false, allowList: ['127.0.0.0/8'] }));
      const resolve = async () => [{ address: '10.0.0.7', family: 4 as const }];
      await assert.doesNotReject(checkUrl(new URL('http://api.corp.example/'), { allowPrivate: false, allowList: ['*.corp.example'], resolve }));
      await assert.rejects(checkUrl(new URL('http://api.other.example/'), { allowPrivate: false, allowList: ['*.corp.example'], resolve }), /private address/);
    });

    it('an allowlist entry with a port allows that port only (127.0.0.1:11434, [::1]:11434)', async () => {
      const policy = { allowPrivate: false, allowList: ['127.0.0.1:11434', '[::1]:11434', '10.0.0.0/8:8080'] };
      await assert.doesNotReject(checkUrl(new URL('http://127.0.0.1:11434/api'), policy));
      await assert.doesNotReject(checkUrl(new URL('http://[::1]:11434/api'), policy));
      await assert.doesNotReject(checkUrl(new URL('http://10.2.3.4:8080/'), policy));
      await assert.rejects(checkUrl(new URL('http://127.0.0.1:11435/api'), policy), /127\.0\.0\.1 is a loopback address.*e\.g\. 127\.0\.0\.1:11435/);
      await assert.rejects(checkUrl(new URL('http://[::1]:80/'), policy), /e\.g\. \[::1\]:80\)/);
      await assert.rejects(checkUrl(new URL('https://10.2.3.4/'), policy), /a private address/);
      const resolve = async () => [{ address: '127.0.0.1', family: 4 as const }];
      await assert.doesNotReject(checkUrl(new URL('http://localhost:11434/'), { ...policy, resolve }));
      await assert.rejects(checkUrl(new URL('http://localhost:9999/'), { ...policy, resolve }), /localhost resolves to 127\.0\.0\.1/);
    });

    it('classifies every non-public range, including IPv4-mapped and other IPv6 forms of them', () => {
      const cases: [string, string | undefined][] = [
        ['127.0.0.1', 'a loopback'],
        ['127.255.0.9', 'a loopback'],
        ['10.0.0.1', 'a private'],
        ['172.16.0.1', 'a private'],
        ['172.31.255.255', 'a private'],
        ['172.32.0.1', undefined],
        ['192.168.1.1', 'a private'],
        ['169.254.169.254', 'a link-local'],
        ['100.64.0.1', 'a carrier-grade NAT (CGNAT)'],
        ['0.0.0.0', 'an unspecified ("this network")'],
        ['255.255.255.255', 'a broadcast'],
        ['240.0.0.1', 'a reserved'],
        ['224.0.0.1', 'a multicast'],
        ['8.8.8.8', undefined],
        ['::1', 'a loopback'],
        ['::', 'an unspecified'],
        ['fe80::1', 'a link-local'],
        ['fe80::1%eth0', 'a link-local'],
        ['fd12:3456::1', 'a private (unique local)'],
        ['::ffff:127.0.0.1', 'an IPv4-mapped loopback'],
        ['::ffff:7f00:1', 'an IPv4-mapped loopback'],
        ['::ffff:10.0.0.1', 'an IPv4-mapped private'],
        ['::ffff:169.254.169.254', 'an IPv4-mapped link-local'],
        ['64:ff9b::a9fe:a9fe', 'an IPv4-embedding link-local'],
        ['2002:7f00:1::', 'an IPv4-embedding loopback'],
        ['::ffff:8.8.8.8', undefined],
        ['2606:4700:4700::1111', undefined],
      ];
      for (const [ip, kind] of cases) assert.equal(nonPublicKind(ip), kind, ip);
    });

    it('refuses IP literals in every spelling the URL parser accepts', async () => {
      for (const url of ['http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0x7f.0.0.1/', 'http://2130706433/', 'http://0/', 'http://169.254.169.254/latest/meta-data']) {
        await assert.rejects(runInvoke({ url }, never, guarded), { message: /is an? [\w -]*(loopback|unspecified|link-local)/ }, url);
      }
    });

    it('checks every redirect like the first URL', async () => {
      await assert.rejects(runInvoke({ url: `${base}/redirect-out` }, never, { allowPrivate: false, allowList: ['127.0.0.1'] }), {
        message: /^Invoke: 10\.0\.0\.1 is a private address/,
      });
      assert.equal(seen.length, 1, 'only the first hop was sent');
    });

    it('refuses other schemes', async () => {
      await assert.rejects(runInvoke({ url: 'file:///etc/passwd' }, never, allowed), /only http and https/);
      await assert.rejects(runInvoke({ url: 'ftp://example.com/x' }, never, allowed), /only http and https/);
    });
  });

  describe('request', () => {
    it('GET sends the variables as the query string (a list repeats its key, a missing value is empty as in RAGFlow)', async () => {
      const out = await runInvoke(
        { url: `${base}/echo?fixed=1`, method: 'get', variables: [{ key: 'q', value: 'a b' }, { key: 'tags', value: ['x', 'y'] }, { key: 'none', value: null }] },
        never,
        allowed,
      );
      const echo = JSON.parse(String(out.result));
      assert.equal(echo.method, 'GET');
      assert.equal(echo.query, '?fixed=1&q=a+b&tags=x&tags=y&none=');
      assert.equal(echo.body, '');
    });

    it('POST sends a JSON body; strings that are JSON are sent as JSON values (RAGFlow)', async () => {
      await runInvoke({ url: `${base}/echo`, method: 'POST', variables: [{ key: 'name', value: 'Ada' }, { key: 'ids', value: '[1, 2]' }, { key: 'n', value: 3 }] }, never, allowed);
      assert.equal(seen[0]!.method, 'POST');
      assert.equal(seen[0]!.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(seen[0]!.body), { name: 'Ada', ids: [1, 2], n: 3 });
    });

    it('PUT with datatype formdata sends a urlencoded form', async () => {
      await runInvoke({ url: `${base}/echo`, method: 'put', datatype: 'formdata', variables: [{ key: 'a', value: '1 2' }, { key: 'b', value: 'x&y' }] }, never, allowed);
      assert.equal(seen[0]!.method, 'PUT');
      assert.equal(seen[0]!.headers['content-type'], 'application/x-www-form-urlencoded');
      assert.equal(seen[0]!.body, 'a=1+2&b=x%26y');
    });

    it('DELETE, PATCH and HEAD are sent with their method', async () => {
      await runInvoke({ url: `${base}/echo`, method: 'delete' }, never, allowed);
      await runInvoke({ url: `${base}/echo`, method: 'patch', variables: [{ key: 'x', value: 'y' }] }, never, allowed);
      const head = await runInvoke({ url: `${base}/echo`, method: 'head' }, never, allowed);
      assert.deepEqual(
        seen.map((s) => [s.method, s.body]),
        [
          ['DELETE', ''],
          ['PATCH', '{"x":"y"}'],
          ['HEAD', ''],
        ],
      );
      assert.equal(head.result, '');
    });

    it('refuses an unknown method', async () => {
      await assert.rejects(runInvoke({ url: `${base}/echo`, method: 'TRACE' }, never, allowed), /unsupported method 'TRACE'/);
    });

    it('sends headers given as a JSON text or an object; a header given overrides the default Content-Type', async () => {
      await runInvoke({ url: `${base}/echo`, headers: '{"Authorization": "Bearer t0k", "X-Count": 3}' }, never, allowed);
      await runInvoke({ url: `${base}/echo`, method: 'post', headers: { 'content-type': 'application/vnd.api+json' }, variables: [{ key: 'a', value: 'b' }] }, never, allowed);
      assert.equal(seen[0]!.headers.authorization, 'Bearer t0k');
      assert.equal(seen[0]!.headers['x-count'], '3');
      assert.equal(seen[1]!.headers['content-type'], 'application/vnd.api+json');
    });

    it('refuses headers that are not a JSON object', async () => {
      await assert.rejects(runInvoke({ url: `${base}/echo`, headers: '[1]' }, never, allowed), /headers must be a JSON object/);
      await assert.rejects(runInvoke({ url: `${base}/echo`, headers: 'Authorization: x' }, never, allowed), /headers must be a JSON object/);
    });

    it('adds http:// to a URL without a scheme (RAGFlow)', async () => {
      const out = await runInvoke({ url: `${base.slice('http://'.length)}/echo` }, never, allowed);
      assert.equal(JSON.parse(String(out.result)).method, 'GET');
    });

    it('returns the body of any HTTP status as the result', async () => {
      assert.equal((await runInvoke({ url: `${base}/status` }, never, allowed)).result, 'service unavailable');
    });

    it('follows redirects (the checked ones)', async () => {
      const out = await runInvoke({ url: `${base}/redirect` }, never, allowed);
      assert.equal(JSON.parse(String(out.result)).query, '?from=redirect');
    });

    it('decodes a gzip answer', async () => {
      assert.equal((await runInvoke({ url: `${base}/gzip` }, never, allowed)).result, 'compressed answer');
    });

    it('fails after `timeout` seconds with a clear message', async () => {
      const started = Date.now();
      await assert.rejects(runInvoke({ url: `${base}/slow`, timeout: 0.3 }, never, allowed), { message: `Invoke: no answer from ${base} within 0.3 s` });
      assert.ok(Date.now() - started < 2000);
    });

    it('stops when the caller aborts (the activity timeout or a cancel)', async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('cancelled by the run')), 100);
      await assert.rejects(runInvoke({ url: `${base}/slow` }, ac.signal, allowed), { message: 'cancelled by the run' });
    });

    it('refuses an answer larger than the limit', async () => {
      await assert.rejects(runInvoke({ url: `${base}/big` }, never, { ...allowed, maxBytes: 1024 }), /larger than/);
    });

    it('refuses a proxy instead of silently sending the request directly', async () => {
      await assert.rejects(runInvoke({ url: `${base}/echo`, proxy: 'http://proxy:3128' }, never, allowed), /proxy param is not supported/);
      assert.ok(await runInvoke({ url: `${base}/echo`, proxy: '' }, never, allowed));
    });

    it('a connection error names the origin', async () => {
      const closed = await startServer(() => undefined);
      await new Promise<void>((r) => closed.server.close(() => r()));
      await assert.rejects(runInvoke({ url: `${closed.base}/x` }, never, allowed), { message: new RegExp(`^Invoke: request to ${closed.base} failed: ECONNREFUSED`) });
    });
  });

  describe('clean_html', () => {
    it('reduces an HTML answer to its text, without scripts and styles', async () => {
      const out = await runInvoke({ url: `${base}/html`, clean_html: true }, never, allowed);
      assert.equal(out.result, 'Page\nHello\none two');
    });

    it('leaves the HTML as it is without clean_html', async () => {
      const out = await runInvoke({ url: `${base}/html` }, never, allowed);
      assert.match(String(out.result), /^<html><head><title>Page<\/title>/);
    });

    it('cleanHtml keeps one line per block', () => {
      assert.equal(cleanHtml('<ul><li>a</li><li> b  c </li></ul><div>d</div>'), 'a\nb c\nd');
    });
  });
});
