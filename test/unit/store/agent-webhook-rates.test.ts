import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { newId } from '../../../src/ids.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

for (const profile of testProfiles()) {
  describe(`webhook rate buckets in the database [${profile}]`, () => {
    let db: MetaDb;
    let store: MetaStore;
    const minute = 60_000;

    before(async () => {
      db = await openTestMetaDb(profile);
      store = new MetaStore(db);
    });
    after(() => db.close());

    it('a bucket of 2 a minute takes two calls, refuses the third with the wait until a call is back, and refills evenly', async () => {
      const agent = newId();
      const t0 = 1_700_000_000_000;
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0), 0);
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0), 0);
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0 + 1000), 29_000, 'a call is back 30 s after the bucket emptied');
      assert.equal(await store.agentTriggers.takeWebhookCall(newId(), 2, minute, t0 + 1000), 0, 'each agent has its own bucket');
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0 + 30_000), 0, 'half the window: one call back');
      assert.ok((await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0 + 30_000)) > 0);
      // A long pause fills the bucket to its limit, never beyond.
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0 + 10 * minute), 0);
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0 + 10 * minute), 0);
      assert.ok((await store.agentTriggers.takeWebhookCall(agent, 2, minute, t0 + 10 * minute)) > 0);
    });

    it('a replica whose clock is behind refills nothing and does not move the bucket back', async () => {
      const agent = newId();
      const t0 = 1_700_000_000_000;
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 1, minute, t0), 0);
      assert.ok((await store.agentTriggers.takeWebhookCall(agent, 1, minute, t0 - 5 * minute)) > 0);
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 1, minute, t0 + minute), 0, 'refilled from the later refill time');
    });

    it('calls taken at once take exactly the limit', async () => {
      const agent = newId();
      const now = Date.now();
      const results = await Promise.all(Array.from({ length: 40 }, () => store.agentTriggers.takeWebhookCall(agent, 10, minute, now)));
      assert.equal(results.filter((w) => w === 0).length, 10);
    });

    it("deleting the agent's trigger rows deletes its bucket", async () => {
      const agent = newId();
      const now = Date.now();
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 1, minute, now), 0);
      await store.agentTriggers.deleteOfAgent(agent);
      assert.equal(await store.agentTriggers.takeWebhookCall(agent, 1, minute, now), 0, 'a full bucket again');
    });
  });
}
