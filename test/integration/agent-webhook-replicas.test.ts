import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startCairn, type Cairn } from '../../src/server.js';
import { Api, newUser } from './client.js';
import { createAgent, messageCanvas } from './agent-helpers.js';
import { harness } from './harness.js';

/**
 * A webhook's `security.rate_limit` holds across API replicas: the shared Cairn and a second API process
 * (`cairn start --no-worker`, a data directory of its own) on the same metadata database (SQLite file or
 * PostgreSQL, by CAIRN_TEST_PROFILE) and the same Temporal server.
 */
describe('webhook rate limit across two API replicas on one database', function () {
  this.timeout(120_000);
  let second: Cairn;
  let dataDir: string;
  let api: Api;

  before(async () => {
    const h = await harness();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-replica-'));
    // The shared Cairn's configuration (its database, files, Temporal and task queue) on a data directory of its own.
    second = await startCairn({ ...h.config, dataDir, port: 0 }, { log: pino({ level: 'silent' }) });
    ({ api } = await newUser('webhook-replicas'));
  });
  after(async () => {
    await second?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('two replicas together allow the limit, not twice it; each refusal is a 429 with Retry-After', async () => {
    const h = await harness();
    const begin = { mode: 'Webhook', prologue: '', methods: ['POST'], execution_mode: 'Immediately', security: { auth_type: 'none', allow_anonymous: true, rate_limit: { limit: 3, per: 'hour' } } };
    const agentId = await createAgent(api, messageCanvas('ok', begin));
    const replicas = [new Api(h.url), new Api(second.url)];
    const answers = [];
    // Alternating replicas: with a bucket per process each would allow 3, so 6 of the 8 calls.
    for (let i = 0; i < 8; i++) {
      const res = await replicas[i % 2]!.request('POST', `/agents/${agentId}/webhook`, { raw: '{}', headers: { 'Content-Type': 'application/json' } });
      answers.push(res);
    }
    assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 429, 429, 429, 429, 429], JSON.stringify(answers.map((r) => r.body)));
    for (const refused of answers.slice(3)) {
      const wait = Number(refused.headers.get('retry-after'));
      // Three calls an hour: one comes back every 20 minutes.
      assert.ok(wait > 0 && wait <= 20 * 60, `Retry-After ${refused.headers.get('retry-after')}`);
      assert.match(refused.body.message, /this webhook takes 3 calls per 3600 s \(security\.rate_limit\); try again in \d+ s/);
    }
    const logs = await api.get(`/agents/${agentId}/webhook/logs`);
    assert.equal(logs.body.data.total, 3, 'the refused calls are not logged');
  });
});
