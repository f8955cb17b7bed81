import assert from 'node:assert/strict';
import { closedPortUrl, echoAnswer, fixedAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { eventually, type Api } from './client.js';
import { addModelServer, createChat, parsedDataset, postSse, userWithModel } from './chat-helpers.js';

const NO_KNOWLEDGE = { system: 'You are a helpful assistant.', parameters: [] };

describe('chat completions over HTTP', function () {
  this.timeout(180_000);
  let fake: FakeOpenAI;
  let api: Api;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await userWithModel('converse', fake.baseUrl));
  });

  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, answer: echoAnswer, reasoningStyle: 'field', ttftMs: 0, tokenDelayMs: 0, failure: undefined };
  });

  after(() => fake.close());

  /** The messages of the last request the fake model received. */
  const lastModelRequest = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body;
  const modelCalls = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').length;

  describe('a chat without datasets', () => {
    let chatId: string;

    before(async () => {
      chatId = (await createChat(api, { name: 'solo', prompt_config: { ...NO_KNOWLEDGE, prologue: 'Hello there.' } })).id;
    });

    it('answers with the model on its own; non-stream returns the whole answer with an empty reference; a session is created', async () => {
      const res = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'hello' }] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.code, 0);
      const data = res.body.data;
      assert.equal(data.answer, 'Echo: hello');
      assert.deepEqual(data.reference, { chunks: [], doc_aggs: [], total: 0 });
      assert.equal(data.chat_id, chatId);
      assert.match(data.session_id, /^[0-9a-f]{32}$/);
      assert.match(data.id, /^[0-9a-f]{32}$/);
      assert.equal(data.final, true);
      assert.deepEqual(lastModelRequest().messages, [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'hello' },
      ]);
      const session = (await api.get(`/chats/${chatId}/sessions/${data.session_id}`)).body.data;
      assert.equal(session.name, 'New session');
      assert.deepEqual(session.messages.map((m: any) => [m.role, m.content]), [
        ['assistant', 'Hello there.'],
        ['user', 'hello'],
        ['assistant', 'Echo: hello'],
      ]);
      assert.equal(session.messages[1].id, data.id, 'question and answer share the turn id');
      assert.equal(session.messages[2].id, data.id);
    });

    it('passes the llm_setting to the model', async () => {
      await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'x' }] });
      const req = lastModelRequest();
      assert.deepEqual([req.temperature, req.top_p, req.presence_penalty, req.frequency_penalty, req.max_tokens], [0.1, 0.3, 0.4, 0.7, 512]);
    });

    it('streams SSE frames that each carry the full answer so far, then the final frame and data:true', async () => {
      fake.behaviour.answer = fixedAnswer('The quick brown fox');
      const res = await postSse(api, '/chat/completions', { chat_id: chatId, stream: true, messages: [{ role: 'user', content: 'go' }] });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('x-accel-buffering'), 'no');
      assert.ok(res.raw.startsWith('data:{'), 'frames are data:{json} without a space');
      assert.ok(res.raw.endsWith('data:{"code":0,"message":"","data":true}\n\n'));
      const answers = res.frames.slice(0, -1).map((f) => f.data.answer);
      assert.deepEqual(answers, ['The', 'The quick', 'The quick brown', 'The quick brown fox', 'The quick brown fox']);
      const final = res.frames.at(-2).data;
      assert.equal(final.final, true);
      assert.deepEqual(final.reference, { chunks: [], doc_aggs: [], total: 0 });
      assert.ok(res.frames.slice(0, -2).every((f) => f.code === 0 && f.data.final === false && f.data.session_id === final.session_id && f.data.id === final.id));
      assert.deepEqual(res.frames.at(-1), { code: 0, message: '', data: true });
    });

    it('keeps the history in the session: only the latest user message is sent', async () => {
      const first = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'one' }] });
      const sid = first.body.data.session_id;
      const second = await api.post('/chat/completions', { chat_id: chatId, session_id: sid, stream: false, messages: [{ role: 'user', content: 'two' }] });
      assert.equal(second.body.data.session_id, sid);
      assert.deepEqual(lastModelRequest().messages.map((m: any) => [m.role, m.content]), [
        ['system', 'You are a helpful assistant.'],
        ['user', 'one'],
        ['assistant', 'Echo: one'],
        ['user', 'two'],
      ]);
      const session = (await api.get(`/chats/${chatId}/sessions/${sid}`)).body.data;
      assert.equal(session.messages.length, 5);
    });

    it('concurrent turns on one session each store their question and answer', async () => {
      const sid = (await api.post(`/chats/${chatId}/sessions`, {})).body.data.id;
      fake.behaviour.tokenDelayMs = 5;
      const questions = ['a', 'b', 'c', 'd'];
      await Promise.all(questions.map((q) => api.post('/chat/completions', { chat_id: chatId, session_id: sid, stream: false, messages: [{ role: 'user', content: q }] })));
      const messages = (await api.get(`/chats/${chatId}/sessions/${sid}`)).body.data.messages.slice(1);
      assert.equal(messages.length, 8);
      for (const q of questions) {
        const asked = messages.find((m: any) => m.role === 'user' && m.content === q);
        const answered = messages.find((m: any) => m.role === 'assistant' && m.id === asked.id);
        assert.equal(answered.content, `Echo: ${q}`);
      }
    });

    it('the SDK route takes question and session_id; without a session_id it opens one for the user_id', async () => {
      const res = await api.post(`/chats/${chatId}/completions`, { question: 'sdk', stream: false, user_id: 'end-user-7' });
      assert.equal(res.body.data.answer, 'Echo: sdk');
      const session = (await api.get(`/chats/${chatId}/sessions`, { user_id: 'end-user-7' })).body.data;
      assert.deepEqual(session.map((s: any) => s.id), [res.body.data.session_id]);
      const stream = await postSse(api, `/chats/${chatId}/completions`, { question: 'again', stream: true, session_id: res.body.data.session_id });
      assert.equal(stream.frames.at(-2).data.answer, 'Echo: again');
      assert.equal(stream.frames.at(-2).data.session_id, res.body.data.session_id);
    });

    it('rejects a missing question, a last message that is not from the user, and unknown chats or sessions', async () => {
      const noQuestion = await api.post('/chat/completions', { chat_id: chatId, messages: [{ role: 'user', content: '  ' }] });
      assert.equal(noQuestion.status, 400);
      const assistantLast = await api.post('/chat/completions', { chat_id: chatId, messages: [{ role: 'assistant', content: 'hi' }] });
      assert.equal(assistantLast.status, 400);
      assert.match(assistantLast.body.message, /from user/);
      assert.equal((await api.post('/chat/completions', { chat_id: '0'.repeat(32), messages: [{ role: 'user', content: 'x' }] })).status, 404);
      assert.equal((await api.post('/chat/completions', { chat_id: chatId, session_id: '0'.repeat(32), messages: [{ role: 'user', content: 'x' }] })).status, 404);
      const other = await userWithModel('intruder', fake.baseUrl);
      assert.equal((await other.api.post('/chat/completions', { chat_id: chatId, messages: [{ role: 'user', content: 'x' }] })).status, 404);
    });

    it('with empty_response set, answers it without calling the model (spec rule 7: leave it empty without datasets)', async () => {
      const chat = await createChat(api, { name: 'solo-empty', prompt_config: { ...NO_KNOWLEDGE, empty_response: 'No knowledge attached.' } });
      const calls = modelCalls();
      const res = await postSse(api, '/chat/completions', { chat_id: chat.id, stream: true, messages: [{ role: 'user', content: 'anything' }] });
      assert.equal(res.frames.at(-2).data.answer, 'No knowledge attached.');
      assert.equal(res.frames.at(-2).data.final, true);
      assert.equal(modelCalls(), calls);
    });

    it('fills {knowledge} with nothing for the default prompt', async () => {
      const chat = await createChat(api, { name: 'solo-default' });
      await api.post('/chat/completions', { chat_id: chat.id, stream: false, messages: [{ role: 'user', content: 'q' }] });
      const system = lastModelRequest().messages[0].content;
      assert.match(system, /Here is the knowledge base:\n\nThe above is the knowledge base\./);
    });
  });

  describe('prompt variables (spec rules 3 and 4)', () => {
    let chatId: string;

    before(async () => {
      chatId = (
        await createChat(api, {
          name: 'variables',
          prompt_config: {
            system: 'Answer in {language} for {audience}.{knowledge}',
            parameters: [{ key: 'knowledge', optional: true }, { key: 'language', optional: false }, { key: 'audience', optional: true }],
          },
        })
      ).id;
    });

    it('fills custom variables from extra top-level keys; an omitted optional one is empty', async () => {
      const res = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'q' }], language: 'French' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(lastModelRequest().messages[0].content, 'Answer in French for .');
      await api.post(`/chats/${chatId}/completions`, { question: 'q', stream: false, language: 'Dutch', audience: 'children' });
      assert.equal(lastModelRequest().messages[0].content, 'Answer in Dutch for children.');
    });

    it('a missing mandatory variable is a 400 naming it, before any stream starts, and stores nothing', async () => {
      const sessions = (await api.get(`/chats/${chatId}/sessions`)).body.data.length;
      for (const stream of [false, true]) {
        const res = await postSse(api, '/chat/completions', { chat_id: chatId, stream, messages: [{ role: 'user', content: 'q' }], audience: 'x' });
        assert.equal(res.status, 400);
        assert.match(res.json.message, /'language'/);
      }
      const sdk = await api.post(`/chats/${chatId}/completions`, { question: 'q' });
      assert.equal(sdk.status, 400);
      assert.equal((await api.get(`/chats/${chatId}/sessions`)).body.data.length, sessions);
    });
  });

  describe('reasoning', () => {
    let chatId: string;

    before(async () => {
      chatId = (await createChat(api, { name: 'reasoner', prompt_config: NO_KNOWLEDGE })).id;
    });

    for (const style of ['field', 'think-tags'] as const) {
      it(`streams reasoning (${style}) apart from the answer, cumulative, between start_to_think and end_to_think`, async () => {
        fake.behaviour.reasoningStyle = style;
        fake.behaviour.answer = fixedAnswer('Forty two', 'Let me think');
        const res = await postSse(api, '/chat/completions', { chat_id: chatId, stream: true, messages: [{ role: 'user', content: 'q' }] });
        const data = res.frames.slice(0, -1).map((f) => f.data);
        const view = data.map((d) => [d.answer, d.reasoning, d.start_to_think ? 'start' : d.end_to_think ? 'end' : d.final ? 'final' : '']);
        assert.deepEqual(view, [
          ['', '', 'start'],
          ['', 'Let', ''],
          ['', 'Let me', ''],
          ['', 'Let me think', ''],
          ['', 'Let me think', 'end'],
          ['Forty', 'Let me think', ''],
          ['Forty two', 'Let me think', ''],
          ['Forty two', 'Let me think', 'final'],
        ]);
        const sid = data.at(-1).session_id;
        const stored = (await api.get(`/chats/${chatId}/sessions/${sid}`)).body.data.messages.at(-1);
        assert.equal(stored.content, 'Forty two');
        assert.equal(stored.reasoning, 'Let me think');
      });
    }

    it('legacy: true restores the older output with the reasoning inside <think>…</think> in the answer', async () => {
      fake.behaviour.answer = fixedAnswer('Forty two', 'Let me think');
      const res = await postSse(api, '/chat/completions', { chat_id: chatId, stream: true, legacy: true, messages: [{ role: 'user', content: 'q' }] });
      const data = res.frames.slice(0, -1).map((f) => f.data);
      assert.deepEqual(data.map((d) => d.answer), [
        '<think>Let',
        '<think>Let me',
        '<think>Let me think',
        '<think>Let me think</think>Forty',
        '<think>Let me think</think>Forty two',
        '<think>Let me think</think>Forty two',
      ]);
      assert.ok(data.every((d) => d.reasoning === undefined && !d.start_to_think && !d.end_to_think));
      const whole = await api.post('/chat/completions', { chat_id: chatId, stream: false, legacy: true, messages: [{ role: 'user', content: 'q' }] });
      assert.equal(whole.body.data.answer, '<think>Let me think</think>Forty two');
      const modern = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'q' }] });
      assert.equal(modern.body.data.answer, 'Forty two');
      assert.equal(modern.body.data.reasoning, 'Let me think');
    });
  });

  describe('model failures leave the session consistent', () => {
    it('a model server that refuses connections: an error frame then data:true when streaming, a 500 JSON otherwise', async () => {
      const deadModel = await addModelServer(api, `${await closedPortUrl()}/v1`, { instance: 'dead', setDefault: false });
      const chat = await createChat(api, { name: 'dead-model', llm_id: deadModel, prompt_config: NO_KNOWLEDGE });
      const res = await postSse(api, '/chat/completions', { chat_id: chat.id, stream: true, messages: [{ role: 'user', content: 'are you there?' }] });
      assert.equal(res.status, 200);
      assert.equal(res.frames.length, 2);
      const [error, done] = res.frames;
      assert.equal(error.code, 500);
      assert.match(error.message, /connection refused/);
      assert.equal(error.data.answer, `**ERROR**: ${error.message}`);
      assert.deepEqual(done, { code: 0, message: '', data: true });

      const whole = await api.post('/chat/completions', { chat_id: chat.id, stream: false, messages: [{ role: 'user', content: 'still there?' }] });
      assert.equal(whole.status, 500);
      assert.equal(whole.body.code, 500);
      assert.match(whole.body.message, /connection refused/);

      const sessions = (await api.get(`/chats/${chat.id}/sessions`)).body.data;
      assert.equal(sessions.length, 2);
      for (const s of sessions) {
        assert.deepEqual(s.messages.slice(1).map((m: any) => m.role), ['user'], 'the question is kept, no answer is stored');
      }
    });

    it('provider errors: 5xx is a 500, an unknown model (404 upstream) is a 400', async () => {
      const chat = await createChat(api, { name: 'failing-model', prompt_config: NO_KNOWLEDGE });
      fake.behaviour.failure = { status: 503, message: 'overloaded', times: 1 };
      const down = await api.post('/chat/completions', { chat_id: chat.id, stream: false, messages: [{ role: 'user', content: 'q' }] });
      assert.equal(down.status, 500);
      assert.match(down.body.message, /HTTP 503.*overloaded/);
      fake.behaviour.failure = { status: 404, message: 'no such model', times: 1 };
      const stream = await postSse(api, '/chat/completions', { chat_id: chat.id, stream: true, messages: [{ role: 'user', content: 'q' }] });
      assert.equal(stream.frames[0].code, 400);
      assert.match(stream.frames[0].data.answer, /^\*\*ERROR\*\*: .*HTTP 404/);
    });

    it('a client that leaves mid-answer stops the model; no half answer is stored', async () => {
      const chat = await createChat(api, { name: 'leaver', prompt_config: NO_KNOWLEDGE });
      // An answer of 50 s: the model is still streaming when the client leaves, however slow the machine.
      fake.behaviour.answer = fixedAnswer(Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' '));
      fake.behaviour.tokenDelayMs = 25;
      const controller = new AbortController();
      const res = await fetch(new URL('/api/v1/chat/completions', api.url), {
        method: 'POST',
        headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ chat_id: chat.id, stream: true, messages: [{ role: 'user', content: 'long' }] }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const sid = JSON.parse(first.split('\n\n')[0]!.slice(5)).data.session_id;
      controller.abort();
      await eventually(async () => fake.open === 0, 10_000, 50).catch(() => assert.fail('the model call is still open 10 s after the client left'));
      // Time for a half answer to be stored, were it.
      await new Promise((r) => setTimeout(r, 1500));
      const session = (await api.get(`/chats/${chat.id}/sessions/${sid}`)).body.data;
      assert.deepEqual(session.messages.slice(1).map((m: any) => [m.role, m.content]), [['user', 'long']]);
    });
  });

  describe('with datasets: references and citations', () => {
    let datasetId: string;
    let docs: Record<string, string>;

    before(async function () {
      this.timeout(180_000);
      ({ id: datasetId, docs } = await parsedDataset(api, 'trail-notes', {
        'cairns.txt': 'Granite cairns mark the trail crossings in the northern valley. Volunteers rebuild each cairn after the winter storms.',
        'logbook.txt': 'The hut logbook records the weather every morning. Hikers write the temperature and the wind speed in the logbook.',
      }));
    });

    const question = 'Which granite cairns mark trail crossings, and what does the logbook record about the weather?';
    const modelAnswer = 'Granite cairns mark the trail crossings. The logbook records the weather every morning. Enjoy your hike';

    it('gives the retrieved chunks to the model as {knowledge} and returns them as references with citation markers', async () => {
      const chat = await createChat(api, { name: 'trail', dataset_ids: [datasetId], similarity_threshold: 0 });
      fake.behaviour.answer = fixedAnswer(modelAnswer);
      const res = await postSse(api, '/chat/completions', { chat_id: chat.id, stream: true, messages: [{ role: 'user', content: question }] });
      const final = res.frames.at(-2).data;
      const chunks = final.reference.chunks;
      assert.equal(chunks.length, 2);
      const cairn = chunks.findIndex((c: any) => c.document_name === 'cairns.txt');
      const logbook = chunks.findIndex((c: any) => c.document_name === 'logbook.txt');
      assert.deepEqual([cairn, logbook].sort(), [0, 1]);
      assert.equal(final.answer, `Granite cairns mark the trail crossings [ID:${cairn}]. The logbook records the weather every morning [ID:${logbook}]. Enjoy your hike`);

      for (const c of chunks) {
        assert.match(c.id, /\S/);
        assert.equal(c.dataset_id, datasetId);
        assert.equal(c.document_id, docs[c.document_name]);
        assert.equal(typeof c.img_id, 'string');
        assert.ok(Array.isArray(c.positions));
        for (const s of ['similarity', 'vector_similarity', 'term_similarity']) assert.ok(c[s] >= 0 && c[s] <= 1, s);
      }
      assert.equal(final.reference.total, 2);
      assert.deepEqual(final.reference.doc_aggs.map((d: any) => d.doc_name).sort(), ['cairns.txt', 'logbook.txt']);

      const frames = res.frames.slice(0, -2).map((f) => f.data);
      assert.ok(frames.every((d) => JSON.stringify(d.reference) === '{}'), 'references arrive with the final message');
      for (let i = 1; i < frames.length; i++) assert.ok(frames[i].answer.startsWith(frames[i - 1].answer), 'cumulative');

      const system = lastModelRequest().messages[0].content;
      assert.ok(system.includes(`ID: ${cairn}\n├── Title: cairns.txt\n└── Content:\n${chunks[cairn].content}`));
      assert.ok(system.includes(`ID: ${logbook}\n├── Title: logbook.txt`));

      const session = (await api.get(`/chats/${chat.id}/sessions/${final.session_id}`)).body.data;
      const stored = session.messages.at(-1);
      assert.equal(stored.content, final.answer);
      assert.deepEqual(stored.reference.chunks.map((c: any) => c.id), chunks.map((c: any) => c.id));
      assert.equal(session.reference.length, 1);
    });

    it('non-stream returns the same answer and reference; quote false inserts no markers', async () => {
      const chat = await createChat(api, { name: 'trail-quiet', dataset_ids: [datasetId], similarity_threshold: 0, prompt_config: { quote: false } });
      fake.behaviour.answer = fixedAnswer(modelAnswer);
      const res = await api.post('/chat/completions', { chat_id: chat.id, stream: false, messages: [{ role: 'user', content: question }] });
      assert.equal(res.body.data.answer, modelAnswer);
      assert.equal(res.body.data.reference.chunks.length, 2);
      assert.equal(res.body.data.reference.total, 2);
    });

    it('top_n limits the chunks given to the model and returned', async () => {
      const chat = await createChat(api, { name: 'trail-top1', dataset_ids: [datasetId], similarity_threshold: 0, top_n: 1 });
      const res = await api.post('/chat/completions', { chat_id: chat.id, stream: false, messages: [{ role: 'user', content: 'granite cairns trail crossings' }] });
      assert.deepEqual(res.body.data.reference.chunks.map((c: any) => c.document_name), ['cairns.txt']);
      assert.equal((lastModelRequest().messages[0].content.match(/^ID: /gm) ?? []).length, 1);
    });

    it('when retrieval finds nothing: empty_response without a model call, else the model answers on its own', async () => {
      const strict = await createChat(api, { name: 'trail-strict', dataset_ids: [datasetId], similarity_threshold: 1, prompt_config: { empty_response: 'Sorry, nothing relevant.' } });
      const calls = modelCalls();
      const res = await api.post('/chat/completions', { chat_id: strict.id, stream: false, messages: [{ role: 'user', content: 'quantum chromodynamics' }] });
      assert.equal(res.body.data.answer, 'Sorry, nothing relevant.');
      assert.deepEqual(res.body.data.reference, { chunks: [], doc_aggs: [], total: 0 });
      assert.equal(modelCalls(), calls);

      const open = await createChat(api, { name: 'trail-open', dataset_ids: [datasetId], similarity_threshold: 1 });
      const own = await api.post('/chat/completions', { chat_id: open.id, stream: false, messages: [{ role: 'user', content: 'quantum chromodynamics' }] });
      assert.equal(own.body.data.answer, 'Echo: quantum chromodynamics');
      assert.equal(modelCalls(), calls + 1);
    });

    it('datasets attached later are used from the next turn on', async () => {
      const chat = await createChat(api, { name: 'trail-later', similarity_threshold: 0 });
      const before = await api.post('/chat/completions', { chat_id: chat.id, stream: false, messages: [{ role: 'user', content: question }] });
      assert.equal(before.body.data.reference.chunks.length, 0);
      await api.patch(`/chats/${chat.id}`, { dataset_ids: [datasetId] });
      const after = await api.post('/chat/completions', { chat_id: chat.id, session_id: before.body.data.session_id, stream: false, messages: [{ role: 'user', content: question }] });
      assert.equal(after.body.data.reference.chunks.length, 2);
    });
  });
});
