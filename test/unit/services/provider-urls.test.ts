import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { ProviderService } from '../../../src/services/providers.js';
import { ModelClients } from '../../../src/services/model-clients.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { DEFAULT_PRIVATE_URL_ALLOWLIST, type ResolvedAddress } from '../../../src/agents/io/ssrf.js';
import type { Principal } from '../../../src/services/auth.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

const OPENAI = 'OpenAI-API-Compatible';
const OLLAMA = 'Ollama';

function principal(id: string, isAdmin: boolean): Principal {
  return { userId: id, email: `${id.slice(0, 4)}@example.com`, nickname: id.slice(0, 4), tenantId: id, teamTenants: [], isAdmin };
}

/** Rejects with a 400 whose message matches. */
async function refused(call: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: { code?: number; message: string }) => {
    assert.equal(err.code, 400, err.message);
    assert.match(err.message, message);
    return true;
  });
}

for (const profile of testProfiles()) describe(`Model provider base URLs follow the outbound-address policy [${profile}]`, () => {
  let db: MetaDb;
  let store: MetaStore;
  const user = principal('u'.repeat(32), false);
  const admin = principal('a'.repeat(32), true);
  /** What `dns.example` resolves to: a public address at registration, changed later by the test. */
  let dnsAnswer: ResolvedAddress[];
  const resolve = async (host: string) => {
    if (host !== 'dns.example') throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return dnsAnswer;
  };
  const service = (allowList = DEFAULT_PRIVATE_URL_ALLOWLIST) => new ProviderService(store, outboundGuard({ allowPrivate: false, allowList, resolve }));
  const register = (providers: ProviderService, p: Principal, baseUrl: string, factory = OPENAI) =>
    providers.createInstance(p, factory, { instance_name: 'local', base_url: baseUrl, model_info: [{ model_name: 'm', model_type: 'chat' }] });

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
    dnsAnswer = [{ address: '93.184.216.34', family: 4 }];
    for (const p of [user, admin]) await store.users.create({ id: p.userId, email: p.email, nickname: p.nickname, password_hash: 'x', is_admin: p.isAdmin ? 1 : 0, create_time: 1, update_time: 1 });
  });
  afterEach(() => db.close());

  it('an ordinary user registering a provider at a loopback or private address is refused, naming the address and the setting', async () => {
    const providers = service();
    await refused(register(providers, user, 'http://127.0.0.1:8000/v1'), /Model provider OpenAI-API-Compatible base URL: 127\.0\.0\.1 is a loopback address; .*CAIRN_PRIVATE_URL_ALLOWLIST, e\.g\. 127\.0\.0\.1:8000/);
    await refused(register(providers, user, 'http://10.1.2.3:8000/v1'), /10\.1\.2\.3 is a private address/);
    await refused(register(providers, user, 'http://192.168.1.5/v1'), /192\.168\.1\.5 is a private address/);
    await refused(register(providers, user, 'http://[::1]:8000/v1'), /::1 is a loopback address/);
    assert.deepEqual(await store.providers.instances(user.tenantId), [], 'nothing was stored');
  });

  it('the same address listed in CAIRN_PRIVATE_URL_ALLOWLIST is accepted', async () => {
    const providers = service(['127.0.0.1:8000', '10.0.0.0/8']);
    assert.equal((await register(providers, user, 'http://127.0.0.1:8000/v1')).base_url, 'http://127.0.0.1:8000/v1');
    await providers.updateInstance(user, OPENAI, 'local', { base_url: 'http://10.1.2.3:8000/v1' });
    await refused(providers.updateInstance(user, OPENAI, 'local', { base_url: 'http://192.168.1.5/v1' }), /192\.168\.1\.5 is a private address/);
  });

  it('a local Ollama (11434) and Xinference (9997) on loopback work with the default allowlist', async () => {
    const providers = service();
    assert.ok(await register(providers, user, 'http://127.0.0.1:11434', OLLAMA));
    assert.ok(await providers.createInstance(user, 'Xinference', { instance_name: 'x', base_url: 'http://127.0.0.1:9997/v1' }));
  });

  it("the installation's admin may register a local model server on any port", async () => {
    const providers = service();
    assert.ok(await register(providers, admin, 'http://127.0.0.1:8000/v1'));
    assert.ok(await providers.createInstance(admin, OPENAI, { instance_name: 'lan', base_url: 'http://192.168.1.5/v1' }));
    // and its models can be called (the admin's workspace is trusted at call time too)
    await new ModelClients(providers).chat(admin.tenantId, 'm@local@OpenAI-API-Compatible');
  });

  it('a provider whose host resolves to loopback at call time is refused, though it was public at registration', async () => {
    const providers = service();
    await register(providers, user, 'http://dns.example:8000/v1');
    const clients = new ModelClients(providers);
    assert.ok(await clients.chat(user.tenantId, 'm@local@OpenAI-API-Compatible'));
    dnsAnswer = [{ address: '127.0.0.1', family: 4 }];
    await refused(clients.chat(user.tenantId, 'm@local@OpenAI-API-Compatible'), /dns\.example resolves to 127\.0\.0\.1, which is a loopback address/);
  });

  it('the connection check refuses a private base URL before connecting', async () => {
    await refused(service().checkConnection(user, OPENAI, { base_url: 'http://169.254.169.254/v1', model_name: 'm', model_type: 'chat' }), /169\.254\.169\.254 is a link-local address/);
  });
});
