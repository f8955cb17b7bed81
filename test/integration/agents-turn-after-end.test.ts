import assert from 'node:assert/strict';
import { echoAnswer, lastUserMessage, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { sseFrames, userWithModel } from './chat-helpers.js';
import { createAgent, llmCanvas, userFillUpCanvas } from './agent-helpers.js';
import { harness } from './harness.js';

/**
 * A client that sends its next turn the instant it read the previous turn's end (the end frame of a stream,
 * or the whole non-stream answer) is never refused: the previous turn no longer runs from its point of view,
 * whatever Temporal still has to close behind it.
 */

interface Ended {
  status: number;
  /** The frames read up to the end frame (SSE), or the answer's JSON body. */
  frames: any[];
  body?: any;
}

/**
 * Posts a turn; with SSE, returns as soon as a frame satisfies `isEnd` (the rest of the stream is drained in
 * the background), as a client that acts on the end frame does.
 */
async function post(api: Api, path: string, body: Record<string, unknown>, isEnd: (frame: any) => boolean): Promise<Ended> {
  const res = await fetch(new URL('/api/v1' + path, api.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const raw = await res.text();
    return { status: res.status, frames: [], body: JSON.parse(raw) };
  }
  const frames: any[] = [];
  const reading = sseFrames(res);
  for (let next = await reading.next(); !next.done; next = await reading.next()) {
    frames.push(next.value);
    if (isEnd(next.value)) {
      // The rest of the stream is drained in the background, as a client that acts on the end frame does.
      void (async () => {
        while (!(await reading.next()).done);
      })().catch(() => undefined);
      return { status: res.status, frames };
    }
  }
  return { status: res.status, frames };
}

const ragflowEnd = (f: any) => f?.event === 'workflow_finished' || f?.event === 'user_inputs';
const openAIEnd = (f: any) => f === '[DONE]' || Boolean(f?.choices?.[0]?.finish_reason);
const ragflowText = (frames: any[]) => frames.filter((f) => f?.event === 'message').map((f) => f.data.content ?? '').join('');
const openAIText = (frames: any[]) => frames.map((f) => f?.choices?.[0]?.delta?.content ?? '').join('');

type Mode = 'sse' | 'json' | 'openai-sse' | 'openai-json';
const MODES: Mode[] = ['sse', 'json', 'openai-sse', 'openai-json'];

/** One turn in one of the four ways a client asks: returns the HTTP status and the answer it read. */
async function ask(api: Api, agentId: string, sessionId: string, mode: Mode, turn: { query?: string; inputs?: Record<string, unknown> }) {
  if (mode === 'sse' || mode === 'json') {
    const r = await post(api, '/agents/chat/completions', { agent_id: agentId, session_id: sessionId, stream: mode === 'sse', ...turn }, ragflowEnd);
    const answer = mode === 'sse' ? ragflowText(r.frames) : r.body?.data?.data?.content;
    const paused = mode === 'sse' ? r.frames.some((f) => f?.event === 'user_inputs') : r.body?.data?.event === 'user_inputs';
    return { status: r.status, answer, paused, raw: JSON.stringify(r.body ?? r.frames.at(-1)) };
  }
  const stream = mode === 'openai-sse';
  const r = await post(api, `/agents_openai/${agentId}/chat/completions`, { model: 'agent', session_id: sessionId, stream, messages: [{ role: 'user', content: turn.query ?? '' }] }, openAIEnd);
  const answer = stream ? openAIText(r.frames) : r.body?.choices?.[0]?.message?.content;
  return { status: r.status, answer, paused: false, raw: JSON.stringify(r.body ?? r.frames.at(-1)) };
}

describe('agents: a turn sent the moment the previous one ended is never refused', function () {
  this.timeout(300_000);
  let fake: FakeOpenAI;
  let api: Api;

  before(async () => {
    fake = await startFakeOpenAI({ answer: echoAnswer, tokenDelayMs: 0 });
    ({ api } = await userWithModel('turn-after-end', fake.baseUrl));
  });
  after(() => fake.close());

  const asked = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => lastUserMessage(r.body.messages));
  const pairs = async (agentId: string, sessionId: string) =>
    ((await api.get(`/agents/${agentId}/sessions/${sessionId}`)).body.data.message as any[]).map((m) => [m.role, m.content]);

  it('N turns in a row, each sent as the previous stream or answer ended (RAGFlow and OpenAI routes): none refused, each answered once', async () => {
    const N = 48;
    const agentId = await createAgent(api, llmCanvas());
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    fake.clear();
    const expected: string[][] = [['assistant', 'Hi, I am an agent.']];
    for (let i = 0; i < N; i++) {
      const mode = MODES[i % MODES.length]!;
      const r = await ask(api, agentId, id, mode, { query: `turn ${i}` });
      assert.equal(r.status, 200, `turn ${i} (${mode}) was refused: ${r.raw}`);
      assert.equal(r.answer, `Echo: turn ${i}`, `turn ${i} (${mode})`);
      expected.push(['user', `turn ${i}`], ['assistant', `Echo: turn ${i}`]);
    }
    assert.deepEqual(asked(), Array.from({ length: N }, (_, i) => `turn ${i}`), 'the model was asked once per turn, in order');
    assert.deepEqual(await pairs(agentId, id), expected, 'the session holds each turn once, in order');
    const runs = (await api.get(`/agents/${agentId}/sessions/${id}/runs?page_size=100`)).body.data as { status: string }[];
    assert.deepEqual(runs.map((r) => r.status), Array(N).fill('finished'), 'one finished run record per turn');
  });

  it('enqueue, interrupt and rollback sent the moment the previous turn ended find nothing to stop: every turn finishes, each once', async () => {
    const N = 24;
    const strategies = ['enqueue', 'interrupt', 'rollback'];
    const agentId = await createAgent(api, llmCanvas());
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    fake.clear();
    const expected: string[][] = [['assistant', 'Hi, I am an agent.']];
    for (let i = 0; i < N; i++) {
      const multitask_strategy = strategies[i % strategies.length];
      const stream = i % 2 === 0;
      const r = await post(api, '/agents/chat/completions', { agent_id: agentId, session_id: id, query: `turn ${i}`, stream, multitask_strategy }, ragflowEnd);
      assert.equal(r.status, 200, `turn ${i} (${multitask_strategy})`);
      assert.equal(stream ? ragflowText(r.frames) : r.body.data.data.content, `Echo: turn ${i}`, `turn ${i} (${multitask_strategy})`);
      expected.push(['user', `turn ${i}`], ['assistant', `Echo: turn ${i}`]);
    }
    assert.deepEqual(asked(), Array.from({ length: N }, (_, i) => `turn ${i}`), 'the model was asked once per turn, in order');
    assert.deepEqual(await pairs(agentId, id), expected, 'the session holds each turn once, in order');
    const runs = (await api.get(`/agents/${agentId}/sessions/${id}/runs?page_size=100`)).body.data as { status: string; steps: { component_id: string }[] }[];
    assert.deepEqual(runs.map((r) => r.status), Array(N).fill('finished'), 'no turn was recorded as stopped');
    // The finishing step runs again when a signal arrives as the workflow closes; its record is written once.
    for (const [i, run] of runs.entries()) {
      const ids = run.steps.map((s) => s.component_id);
      assert.deepEqual(ids, [...new Set(ids)], `run ${i}: each component recorded once`);
    }
  });

  it('UserFillUp: the answer sent as the pause ended, and the next question as the answer ended, are never refused', async () => {
    const rounds = 12;
    const dsl = userFillUpCanvas();
    const agentId = await createAgent(api, dsl);
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    fake.clear();
    for (let i = 0; i < rounds; i++) {
      const pauseMode: Mode = i % 2 ? 'json' : 'sse';
      const answerMode: Mode = i % 2 ? 'sse' : 'json';
      const pause = await ask(api, agentId, id, pauseMode, { query: `question ${i}` });
      assert.equal(pause.status, 200, `round ${i}: the question was refused: ${pause.raw}`);
      assert.ok(pause.paused, `round ${i}: the turn pauses at the UserFillUp: ${pause.raw}`);
      const answer = await ask(api, agentId, id, answerMode, { inputs: { answer: { type: 'line', value: `answer ${i}` } } });
      assert.equal(answer.status, 200, `round ${i}: the UserFillUp answer was refused: ${answer.raw}`);
      assert.equal(answer.answer, `Echo: answer ${i}`, `round ${i}`);
    }
    assert.deepEqual(asked(), Array.from({ length: rounds }, (_, i) => `answer ${i}`), 'each UserFillUp answer resumed the run once');
    const finals = (await pairs(agentId, id)).filter(([role, content]) => role === 'assistant' && content.startsWith('Echo:'));
    assert.deepEqual(finals.map(([, c]) => c), Array.from({ length: rounds }, (_, i) => `Echo: answer ${i}`), 'each answer is in the session once');
  });

  it('the worker killed as a turn\'s stream ended: the next turn, sent at once, waits for another worker to close the previous one, then runs', async () => {
    // The kill sometimes lands before the finished turn's workflow task completed: Temporal then gives that task
    // to the restarted worker after its 10 s timeout, and the next turn waits for it instead of a 409.
    const h = await harness();
    const kills = 6;
    const agentId = await createAgent(api, llmCanvas());
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const expected: string[][] = [['assistant', 'Hi, I am an agent.']];
    for (let i = 0; i < kills * 2; i++) {
      const mode: Mode = i % 4 < 2 ? 'sse' : 'json';
      const r = await ask(api, agentId, id, mode, { query: `turn ${i}` });
      assert.equal(r.status, 200, `turn ${i} (${mode}) was refused: ${r.raw}`);
      assert.equal(r.answer, `Echo: turn ${i}`, `turn ${i} (${mode})`);
      expected.push(['user', `turn ${i}`], ['assistant', `Echo: turn ${i}`]);
      if (i % 2 === 0) {
        // Killed as this turn ended; the next turn goes out at once, the restart finishes behind it.
        const killed = h.killWorker();
        const next = await ask(api, agentId, id, mode, { query: `turn ${++i}` });
        assert.equal(next.status, 200, `turn ${i} (${mode}), sent as the worker was killed, was refused: ${next.raw}`);
        assert.equal(next.answer, `Echo: turn ${i}`, `turn ${i} (${mode})`);
        expected.push(['user', `turn ${i}`], ['assistant', `Echo: turn ${i}`]);
        await killed;
      }
    }
    assert.deepEqual(await pairs(agentId, id), expected, 'the session holds each turn once, in order');
    const runs = (await api.get(`/agents/${agentId}/sessions/${id}/runs?page_size=100`)).body.data as { status: string }[];
    assert.deepEqual(runs.map((r) => r.status), Array(kills * 2).fill('finished'), 'one finished run record per turn');
  });
});
