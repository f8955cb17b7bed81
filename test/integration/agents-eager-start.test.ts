import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixedAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { Api } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { createAgent, llmCanvas, runStream, streamedText } from './agent-helpers.js';
import { adminKeyOf, startCairnProcess, type CairnProcess } from './cairn-process.js';

describe('agents: eager start on `cairn start`', function () {
  this.timeout(180_000);
  let fake: FakeOpenAI;
  let cairn: CairnProcess;
  let dataDir: string;

  before(async () => {
    fake = await startFakeOpenAI({ answer: fixedAnswer('eager answer') });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-eager-'));
    cairn = await startCairnProcess(dataDir, undefined, { env: { CAIRN_ALLOW_PRIVATE_URLS: 'true' } });
  });
  after(async () => {
    await cairn?.stop();
    await fake?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('with the embedded worker, an agent turn starts eagerly (its first workflow task comes back with the start) and answers', async () => {
    const api = new Api(cairn.url, adminKeyOf(dataDir));
    await addModelServer(api, fake.baseUrl);
    const agentId = await createAgent(api, llmCanvas());
    const eagerStarts = async () => {
      const res = await fetch(new URL('/metrics', cairn.url), { headers: { Authorization: `Bearer ${api.key}` } });
      return sampleValue(parsePrometheusText(await res.text()), 'cairn_agent_turn_starts_total', { start: 'eager' }) ?? 0;
    };
    const before = await eagerStarts();
    for (let i = 0; i < 2; i++) {
      const { events } = await runStream(api, { agent_id: agentId, query: `question ${i}` });
      assert.equal(streamedText(events), 'eager answer');
    }
    assert.equal(await eagerStarts(), before + 2, 'both turns started eagerly');
  });
});
