import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { ProviderService } from '../../../src/services/providers.js';
import { ModelClients } from '../../../src/services/model-clients.js';
import { McpServerService } from '../../../src/services/mcp-servers.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { refusalOf, type ResolvedAddress } from '../../../src/agents/io/ssrf.js';
import { guardedFetch } from '../../../src/agents/io/guarded-fetch.js';
import type { Principal } from '../../../src/services/auth.js';
import { fixedAnswer, startFakeMcp, startFakes, type FakeMcp, type Fakes } from '../../fakes/index.js';
import { openTestMetaDb } from '../../support/meta-store.js';

const PUBLIC: ResolvedAddress = { address: '93.184.216.34', family: 4 };
const LOOPBACK: ResolvedAddress = { address: '127.0.0.1', family: 4 };
const REBOUND = /dns\.example resolves to 127\.0\.0\.1, which is a loopback address; set CAIRN_ALLOW_PRIVATE_URLS=true \(or list it in CAIRN_PRIVATE_URL_ALLOWLIST/;

const portOf = (url: string) => Number(new URL(url).port);

/** Rejects with a 400 whose message matches. */
async function refused(call: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: { code?: number; status?: number; message: string }) => {
    assert.equal(err.code ?? err.status, 400, err.message);
    assert.match(err.message, message);
    return true;
  });
}

/**
 * DNS rebinding: `dns.example` answers a public address to the first lookup (the check before the call)
 * and loopback to every later one (the connect), where the fake servers listen. A name the system
 * resolver does not know, so a connection that reaches a fake went to an address the policy handed out.
 */
describe('Provider and MCP connections go only to an address the outbound-address policy accepted', function () {
  this.timeout(30_000);
  let db: MetaDb;
  let store: MetaStore;
  let fakes: Fakes;
  let mcp: FakeMcp;
  const user: Principal = { userId: 'u'.repeat(32), email: 'u@example.com', nickname: 'u', tenantId: 'u'.repeat(32), teamTenants: [], isAdmin: false };
  let answers: ResolvedAddress[][];
  const lookups: string[] = [];
  const resolve = async (host: string) => {
    lookups.push(host);
    if (host !== 'dns.example') throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return answers.length > 1 ? answers.shift()! : answers[0]!;
  };
  /** The first lookup answers public, every later one loopback. */
  const rebinding = () => (answers = [[PUBLIC], [LOOPBACK]]);
  const policy = (allowList: string[] = []) => outboundGuard({ allowPrivate: false, allowList, resolve });
  const requestsToFakes = () => fakes.openai.requests.length + fakes.ollama.requests.length + fakes.xinference.requests.length + mcp.requests.length;

  before(async () => {
    fakes = await startFakes({ answer: fixedAnswer('pinned answer') });
    mcp = await startFakeMcp();
  });
  after(async () => {
    await fakes.close();
    await mcp.close();
  });
  beforeEach(async () => {
    db = await openTestMetaDb('embedded');
    store = new MetaStore(db);
    await store.users.create({ id: user.userId, email: user.email, nickname: user.nickname, password_hash: 'x', is_admin: 0, create_time: 1, update_time: 1 });
    answers = [[PUBLIC]];
    lookups.length = 0;
    fakes.openai.clear();
    fakes.ollama.clear();
    fakes.xinference.clear();
    mcp.requests.length = 0;
  });
  afterEach(() => db.close());

  /** Registers `dns.example` on the fake's port for each provider kind (public at registration). */
  async function registerProviders(providers: ProviderService) {
    await providers.createInstance(user, 'OpenAI-API-Compatible', { instance_name: 'oai', base_url: `http://dns.example:${portOf(fakes.openai.url)}/v1`, model_info: [{ model_name: 'm', model_type: 'chat' }, { model_name: 'e', model_type: 'embedding' }] });
    await providers.createInstance(user, 'Ollama', { instance_name: 'oll', base_url: `http://dns.example:${portOf(fakes.ollama.url)}`, model_info: [{ model_name: 'llama3.2', model_type: 'chat' }] });
    await providers.createInstance(user, 'Xinference', { instance_name: 'xin', base_url: `http://dns.example:${portOf(fakes.xinference.url)}`, model_info: [{ model_name: 'r', model_type: 'rerank' }] });
  }

  it('a chat, embedding or rerank call whose name rebinds to loopback after the check is refused at connect, naming the address', async () => {
    const providers = new ProviderService(store, policy());
    await registerProviders(providers);
    const clients = new ModelClients(providers);
    const calls: [string, () => Promise<unknown>][] = [
      ['OpenAI-compatible chat', async () => (await clients.chat(user.tenantId, 'm@oai@OpenAI-API-Compatible')).complete([{ role: 'user', content: 'hi' }])],
      ['OpenAI-compatible embedding', async () => (await clients.embedding(user.tenantId, 'e@oai@OpenAI-API-Compatible')).embed(['hi'])],
      ['Ollama chat', async () => (await clients.chat(user.tenantId, 'llama3.2@oll@Ollama')).complete([{ role: 'user', content: 'hi' }])],
      ['Xinference rerank', async () => (await clients.rerank(user.tenantId, 'r@xin@Xinference')).rerank('q', ['d'])],
    ];
    for (const [what, call] of calls) {
      rebinding();
      lookups.length = 0;
      await refused(call(), REBOUND).catch((err: Error) => assert.fail(`${what}: ${err.message}`));
      assert.ok(lookups.length >= 2, `${what}: checked before the call and again at connect (${lookups.length} lookups)`);
    }
    assert.equal(requestsToFakes(), 0, 'no request reached the loopback servers');
  });

  it("the connection check (POST /providers/{p}/check) is refused when the name rebinds between its check and its connect", async () => {
    const providers = new ProviderService(store, policy());
    rebinding();
    await refused(providers.checkConnection(user, 'OpenAI-API-Compatible', { base_url: `http://dns.example:${portOf(fakes.openai.url)}/v1`, model_name: 'm', model_type: 'chat' }), REBOUND);
    assert.equal(requestsToFakes(), 0);
  });

  it('an MCP server whose name rebinds to loopback is refused when its tools are listed, naming the address', async () => {
    const guard = policy();
    const servers = new McpServerService(store, (url) => guard(url, 'MCP server'));
    const { id } = (await servers.create(user, { name: 'rebinding', url: `http://dns.example:${mcp.port}/mcp` })) as { id: string };
    rebinding();
    await refused(servers.tools(user, id), /MCP server 'rebinding' at http:\/\/dns\.example:\d+\/mcp: MCP server: dns\.example resolves to 127\.0\.0\.1, which is a loopback address/);
    assert.equal(mcp.requests.length, 0, 'no request reached the loopback MCP server');
  });

  it('allowlisted loopback servers keep working, reached by a name through the checked address, Host still the name', async () => {
    answers = [[LOOPBACK]];
    const allow = [fakes.openai, fakes.ollama, fakes.xinference].map((f) => `127.0.0.1:${portOf(f.url)}`).concat(`127.0.0.1:${mcp.port}`);
    const guard = policy(allow);
    const providers = new ProviderService(store, guard);
    await registerProviders(providers);
    const clients = new ModelClients(providers);
    assert.equal(await (await clients.chat(user.tenantId, 'm@oai@OpenAI-API-Compatible')).complete([{ role: 'user', content: 'hi' }]), 'pinned answer');
    assert.equal(await (await clients.chat(user.tenantId, 'llama3.2@oll@Ollama')).complete([{ role: 'user', content: 'hi' }]), 'pinned answer');
    assert.equal((await (await clients.embedding(user.tenantId, 'e@oai@OpenAI-API-Compatible')).embed(['hi'])).length, 1);
    assert.equal((await (await clients.rerank(user.tenantId, 'r@xin@Xinference')).rerank('q', ['d'])).length, 1);
    assert.equal(fakes.openai.requests.at(-1)!.headers.host, `dns.example:${portOf(fakes.openai.url)}`);

    const servers = new McpServerService(store, (url) => guard(url, 'MCP server'));
    const { id } = (await servers.create(user, { name: 'local', url: `http://dns.example:${mcp.port}/mcp` })) as { id: string };
    assert.deepEqual((await servers.tools(user, id)).tools.map((t) => t.name), ['ping']);
    assert.equal(mcp.requests.at(-1)!.host, `dns.example:${mcp.port}`);
  });

  it('over TLS the connection goes to the checked address and still names the host in SNI', async () => {
    answers = [[LOOPBACK]];
    const names: string[] = [];
    // No certificate: the handshake stops right after the ClientHello, whose server name is what this checks.
    const tlsServer = createTlsServer({ SNICallback: (name, cb) => (names.push(name), cb(new Error('no certificate here'), undefined)) });
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const { port } = tlsServer.address() as AddressInfo;
    try {
      const pinnedFetch = guardedFetch({ allowPrivate: false, allowList: [`127.0.0.1:${port}`], resolve }, 'Model provider');
      await assert.rejects(pinnedFetch(`https://dns.example:${port}/v1/models`));
      assert.deepEqual(names, ['dns.example']);
    } finally {
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    }
  });

  it('a redirect to an address the policy refuses is refused when its connection opens', async () => {
    const target = await listen((_req, res) => res.end('secret'));
    const redirector = await listen((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end());
    try {
      const pinnedFetch = guardedFetch({ allowPrivate: false, allowList: [`127.0.0.1:${redirector.port}`], resolve }, 'Model provider');
      await assert.rejects(pinnedFetch(`http://127.0.0.1:${target.port}/`), 'the target itself is not allowed');
      const err = await pinnedFetch(`http://127.0.0.1:${redirector.port}/`).then(
        () => assert.fail('the redirect was followed'),
        (e: unknown) => e,
      );
      assert.match(refusalOf(err)?.message ?? String(err), new RegExp(`127\\.0\\.0\\.1 is a loopback address; .*e\\.g\\. 127\\.0\\.0\\.1:${target.port}`));
      assert.equal(target.hits, 0);
      assert.equal(redirector.hits, 1);
    } finally {
      await target.close();
      await redirector.close();
    }
  });
});

async function listen(handler: Parameters<typeof createServer>[1]) {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    handler!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get hits() {
      return hits;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
