import assert from 'node:assert/strict';
import { fixedAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { sseFrames, userWithModel } from './chat-helpers.js';
import { createAgent, llmCanvas } from './agent-helpers.js';
import { harness } from './harness.js';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../../src/engine/bundle-workflows.js';
import { agentTaskQueue, workflowIds } from '../../src/engine/task-queues.js';
import { installRuntimeOnce } from '../../src/engine/worker.js';

describe('agents: durable runs', function () {
  this.timeout(180_000);
  let fake: FakeOpenAI;
  let api: Api;
  const answer = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

  before(async () => {
    fake = await startFakeOpenAI({ answer: fixedAnswer(answer), tokenDelayMs: 100 });
    ({ api } = await userWithModel('durable', fake.baseUrl));
  });
  after(() => fake.close());
  const chatCalls = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

  it('a worker killed with SIGKILL mid-stream: the run resumes on another worker, the caller gets the whole answer once and the session holds each message once', async () => {
    const h = await harness();
    const agentId = await createAgent(api, llmCanvas());
    fake.clear();
    const res = await fetch(new URL('/api/v1/agents/chat/completions', api.url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId, query: 'long answer', stream: true }),
    });
    const events: any[] = [];
    let killed = false;
    for await (const frame of sseFrames(res)) {
      if (frame === '[DONE]') break;
      events.push(frame);
      if (!killed && frame.event === 'message' && frame.data.content) {
        killed = true;
        await h.killWorker();
      }
    }
    assert.ok(killed, 'the worker was killed while the answer streamed');
    // A kill that came after the answer was complete would prove nothing: the worker that resumed the run
    // must have asked the model again.
    assert.equal(chatCalls(), 2, 'the model was asked once before the kill and once by the resumed run');
    assert.ok(!events.some((e) => e.code), `no error frame: ${JSON.stringify(events.filter((e) => e.code))}`);
    const text = events.filter((e) => e.event === 'message').map((e) => e.data.content).join('');
    assert.equal(text, answer, 'the streamed text is the whole answer, nothing repeated');
    assert.ok(events.some((e) => e.event === 'workflow_finished'));
    const session = (await api.get(`/agents/${agentId}/sessions/${events[0].session_id}`)).body.data;
    assert.deepEqual(session.message.map((m: any) => [m.role, m.content]), [
      ['assistant', 'Hi, I am an agent.'],
      ['user', 'long answer'],
      ['assistant', answer],
    ]);
  });

  it('agent runs use their own task queue, and tokens never pass through workflow history: a 400-token answer makes as many history events as a 4-token one, and the history replays deterministically', async () => {
    const h = await harness();
    const connection = await Connection.connect({ address: h.temporal.address });
    try {
      const client = new Client({ connection });
      const historyOf = async (words: number) => {
        fake.behaviour = { ...fake.behaviour, answer: fixedAnswer(Array.from({ length: words }, (_, i) => `t${i}`).join(' ')), tokenDelayMs: 0 };
        const agentId = await createAgent(api, llmCanvas());
        const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'q', stream: false });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const handle = client.workflow.getHandle(workflowIds.agentRun(agentId, res.body.data.session_id));
        await handle.result();
        assert.equal((await handle.describe()).taskQueue, agentTaskQueue(h.config.taskQueue), 'agent runs poll their own task queue, apart from parsing');
        return handle.fetchHistory();
      };
      const short = await historyOf(4);
      const long = await historyOf(400);
      assert.equal(long.events!.length, short.events!.length);
      assert.ok(short.events!.length < 40, `${short.events!.length} events for Begin → LLM → Message`);
      installRuntimeOnce();
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath(h.config.rootDir) } }, long);
    } finally {
      await connection.close();
    }
  });
});
