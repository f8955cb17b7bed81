import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { openTestMetaDb } from '../../support/meta-store.js';
import { MetaStore } from '../../../src/store/index.js';
import { ProviderService } from '../../../src/services/providers.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { ModelClients } from '../../../src/services/model-clients.js';
import { tenantPrincipal } from '../../../src/services/access.js';

/** Clients of three configured embedding models (no model server is called: clients are built, not used). */
describe('ModelClients: the model clients cache', () => {
  let db: MetaDb;
  let providers: ProviderService;
  const tenant = 'c'.repeat(32);
  const ids = ['one', 'two', 'three'].map((name) => `embed-${name}@${name}@OpenAI-API-Compatible`);

  before(async () => {
    db = await openTestMetaDb('embedded');
    providers = new ProviderService(new MetaStore(db), outboundGuard({ allowPrivate: true }));
    for (const name of ['one', 'two', 'three']) {
      await providers.createInstance(tenantPrincipal(tenant), 'OpenAI-API-Compatible', {
        instance_name: name,
        base_url: `http://127.0.0.1:9/${name}/v1`,
        model_info: [{ model_name: `embed-${name}`, model_type: 'embedding' }],
      });
    }
  });
  after(() => db.close());

  it('builds one client per model configuration and reuses it', async () => {
    const clients = new ModelClients(providers);
    const first = await clients.embedding(tenant, ids[0]!);
    assert.equal(await clients.embedding(tenant, ids[0]!), first);
    assert.notEqual(await clients.embedding(tenant, ids[1]!), first);
    assert.equal(clients.size, 2);
  });

  it('keeps at most its bound, dropping the least recently used client', async () => {
    const clients = new ModelClients(providers, 2);
    const one = await clients.embedding(tenant, ids[0]!);
    const two = await clients.embedding(tenant, ids[1]!);
    assert.equal(await clients.embedding(tenant, ids[0]!), one, 'one is now the most recently used');
    await clients.embedding(tenant, ids[2]!);
    assert.equal(clients.size, 2);
    assert.equal(await clients.embedding(tenant, ids[0]!), one, 'one was kept');
    const twoAgain = await clients.embedding(tenant, ids[1]!);
    assert.notEqual(twoAgain, two, 'two had been dropped and is built again');
    assert.equal(twoAgain.id, two.id);
    assert.equal(clients.size, 2);
  });

  it('refuses a bound below one', () => {
    assert.throws(() => new ModelClients(providers, 0), /at least one client/);
  });
});
