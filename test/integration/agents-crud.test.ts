import assert from 'node:assert/strict';
import { echoAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { newUser, type Api } from './client.js';
import { userWithModel } from './chat-helpers.js';
import { canvas, createAgent, fixture, llmCanvas, messageCanvas } from './agent-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MISSING = '0'.repeat(32);

/** One non-stream turn; returns the aggregated answer text (asserting a 200). */
async function ask(api: Api, agentId: string, body: Record<string, unknown> = {}): Promise<{ content: string; sessionId: string }> {
  const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'hi', stream: false, ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { content: res.body.data.data.content, sessionId: res.body.data.session_id };
}

function assertError(res: { status: number; body: any }, status: number, message?: RegExp) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.code, status);
  assert.equal(typeof res.body.message, 'string');
  if (message) assert.match(res.body.message, message);
}

describe('agents over HTTP: CRUD, validation, permissions, versions, sessions', function () {
  this.timeout(60_000);
  let fake: FakeOpenAI;
  let api: Api;
  let seq = 0;
  const unique = (label: string) => `${label}-${process.pid}-${Date.now()}-${++seq}`;

  before(async () => {
    fake = await startFakeOpenAI({ answer: echoAnswer });
    ({ api } = await userWithModel('agents-crud', fake.baseUrl));
  });
  after(() => fake.close());

  describe('create, get, list, update, delete', () => {
    it('create answers 200 with the agent (title, description, the DSL with its graph as given, permission me)', async () => {
      const dsl = llmCanvas();
      const title = unique('Create');
      const res = await api.post('/agents', { title, dsl, description: 'answers briefly' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.code, 0);
      const agent = res.body.data;
      assert.match(agent.id, /^[0-9a-f]{32}$/);
      assert.equal(agent.title, title);
      assert.equal(agent.description, 'answers briefly');
      assert.equal(agent.permission, 'me');
      assert.equal(agent.canvas_category, 'agent_canvas');
      assert.deepEqual(agent.dsl.graph, dsl.graph);
      assert.deepEqual(Object.keys(agent.dsl.components).sort(), Object.keys(dsl.components).sort());
      assert.ok(Number.isInteger(agent.create_time) && Math.abs(agent.create_time - Date.now() / 1000) < 60, 'create_time is Unix seconds');
    });

    it('get returns the stored DSL: components and params unchanged, graph kept as given', async () => {
      const dsl = llmCanvas({ temperature: 0.3 });
      dsl.graph = { nodes: [{ id: 'begin', data: { name: 'Start' }, position: { x: 1, y: 2 } }], edges: [{ source: 'begin', target: 'LLM:Answer' }] } as any;
      const id = await createAgent(api, dsl);
      const res = await api.get(`/agents/${id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.id, id);
      assert.deepEqual(res.body.data.dsl.graph, dsl.graph);
      assert.deepEqual(res.body.data.dsl.components, dsl.components);
    });

    it('get, update and delete of a missing agent are 404 with a message', async () => {
      assertError(await api.get(`/agents/${MISSING}`), 404, /not found/i);
      assertError(await api.put(`/agents/${MISSING}`, { title: 'x' }), 404, /not found/i);
      assertError(await api.delete(`/agents/${MISSING}`), 404, /not found/i);
      assertError(await api.get('/agents/not-an-id'), 404);
    });

    it('list answers data {canvas, total}, newest update first by default; updating an older agent brings it first', async () => {
      const tag = unique('order');
      const ids: string[] = [];
      for (const n of ['a', 'b', 'c']) {
        ids.push(await createAgent(api, messageCanvas(n), `${tag}-${n}`));
        await sleep(5);
      }
      const list = await api.get('/agents', { keywords: tag });
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.equal(list.body.data.total, 3);
      assert.deepEqual(list.body.data.canvas.map((a: any) => a.id), [ids[2], ids[1], ids[0]]);

      assert.equal((await api.put(`/agents/${ids[0]}`, { description: 'touched' })).status, 200);
      const after = await api.get('/agents', { keywords: tag });
      assert.deepEqual(after.body.data.canvas.map((a: any) => a.id), [ids[0], ids[2], ids[1]]);

      const byCreate = await api.get('/agents', { keywords: tag, orderby: 'create_time', desc: false });
      assert.deepEqual(byCreate.body.data.canvas.map((a: any) => a.id), ids);
    });

    it('list pages with page / page_size (total counts every match) and filters by keywords, case-insensitively', async () => {
      const tag = unique('Paged');
      for (const n of [1, 2, 3, 4, 5]) {
        await createAgent(api, messageCanvas(String(n)), `${tag}-${n}`);
        await sleep(3);
      }
      await createAgent(api, messageCanvas('other'), unique('unrelated'));
      const page1 = await api.get('/agents', { keywords: tag.toLowerCase(), page: 1, page_size: 2 });
      const page3 = await api.get('/agents', { keywords: tag.toUpperCase(), page: 3, page_size: 2 });
      assert.equal(page1.body.data.total, 5);
      assert.deepEqual(page1.body.data.canvas.map((a: any) => a.title), [`${tag}-5`, `${tag}-4`]);
      assert.equal(page3.body.data.total, 5);
      assert.deepEqual(page3.body.data.canvas.map((a: any) => a.title), [`${tag}-1`]);
      const none = await api.get('/agents', { keywords: unique('nothing-matches') });
      assert.deepEqual(none.body.data, { canvas: [], total: 0 });
      // issue 15 item 4: page_size=0 means the default page size, not an error
      assert.equal((await api.get('/agents', { keywords: tag.toLowerCase(), page_size: 0 })).body.data.canvas.length, 5);
      assertError(await api.get('/agents', { orderby: 'colour' }), 400, /orderby/);
    });

    it('update changes only what is given: title, description, dsl each optional; an empty update changes nothing', async () => {
      const title = unique('Upd');
      const id = await createAgent(api, messageCanvas('v1'), title);
      await api.put(`/agents/${id}`, { description: 'first description' });
      const before = (await api.get(`/agents/${id}`)).body.data;

      const none = await api.put(`/agents/${id}`, {});
      assert.equal(none.status, 200, JSON.stringify(none.body));
      assert.ok(Number.isInteger(none.body.data.update_time));
      const unchanged = (await api.get(`/agents/${id}`)).body.data;
      assert.equal(unchanged.title, title);
      assert.equal(unchanged.description, 'first description');
      assert.deepEqual(unchanged.dsl, before.dsl);

      await api.put(`/agents/${id}`, { title: `${title}-renamed` });
      let now = (await api.get(`/agents/${id}`)).body.data;
      assert.deepEqual([now.title, now.description, now.dsl], [`${title}-renamed`, 'first description', before.dsl]);

      await api.put(`/agents/${id}`, { description: 'second description' });
      now = (await api.get(`/agents/${id}`)).body.data;
      assert.deepEqual([now.title, now.description, now.dsl], [`${title}-renamed`, 'second description', before.dsl]);

      const v2 = messageCanvas('v2');
      await api.put(`/agents/${id}`, { dsl: v2 });
      now = (await api.get(`/agents/${id}`)).body.data;
      assert.deepEqual([now.title, now.description], [`${title}-renamed`, 'second description']);
      assert.deepEqual(now.dsl.components['Message:Out'].obj.params.content, ['v2']);
      assert.equal((await ask(api, id)).content, 'v2', 'a new run uses the updated DSL');
    });

    it('delete removes the agent and its sessions: afterwards every route on it is 404', async () => {
      const id = await createAgent(api, messageCanvas('bye'));
      const session = (await api.post(`/agents/${id}/sessions`, {})).body.data;
      const del = await api.delete(`/agents/${id}`);
      assert.equal(del.status, 200, JSON.stringify(del.body));
      assert.equal(del.body.code, 0);
      assertError(await api.get(`/agents/${id}`), 404);
      assertError(await api.get(`/agents/${id}/sessions/${session.id}`), 404);
      assertError(await api.post('/agents/chat/completions', { agent_id: id, query: 'x' }), 404);
      assertError(await api.delete(`/agents/${id}`), 404);
    });

    it('titles are unique per tenant case-insensitively (400 "<title> already exists."), on create and on rename; another tenant may reuse a title', async () => {
      const title = unique('Dup');
      const first = await createAgent(api, messageCanvas('x'), title);
      const again = await api.post('/agents', { title: title.toUpperCase(), dsl: messageCanvas('x') });
      assertError(again, 400);
      assert.equal(again.body.message, `${title.toUpperCase()} already exists.`);

      const other = await createAgent(api, messageCanvas('x'), unique('Other'));
      const rename = await api.put(`/agents/${other}`, { title: title.toLowerCase() });
      assertError(rename, 400);
      assert.equal(rename.body.message, `${title.toLowerCase()} already exists.`);
      assert.equal((await api.put(`/agents/${first}`, { title: title.toLowerCase() })).status, 200, 'an agent may change the case of its own title');

      const stranger = await newUser('agents-crud-title');
      const res = await stranger.api.post('/agents', { title, dsl: messageCanvas('x') });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    });
  });

  describe('DSL validation', () => {
    const switchCanvas = (operator: string) =>
      canvas([
        ['begin', 'Begin', {}, ['Switch:Route']],
        ['Switch:Route', 'Switch', { conditions: [{ logical_operator: 'and', items: [{ cpn_id: 'sys.query', operator, value: 'x' }], to: ['Message:A'] }], end_cpn_ids: ['Message:B'] }, ['Message:A', 'Message:B']],
        ['Message:A', 'Message', { content: ['A'] }, []],
        ['Message:B', 'Message', { content: ['B'] }, []],
      ]);

    it('a bad param is a 400 naming the component id and the param (LLM temperature 5)', async () => {
      const res = await api.post('/agents', { title: unique('bad-temp'), dsl: llmCanvas({ temperature: 5 }) });
      assertError(res, 400);
      assert.match(res.body.message, /LLM:Answer/);
      assert.match(res.body.message, /temperature/);
    });

    it('a bad Switch operator is a 400 naming the component id and the param', async () => {
      const res = await api.post('/agents', { title: unique('bad-op'), dsl: switchCanvas('frobnicate') });
      assertError(res, 400);
      assert.match(res.body.message, /Switch:Route/);
      assert.match(res.body.message, /operator/);
      assert.equal((await api.post('/agents', { title: unique('good-op'), dsl: switchCanvas('contains') })).status, 200);
    });

    it('an unknown component name is a 400 that names it', async () => {
      const dsl = canvas([
        ['begin', 'Begin', {}, ['Frob:1']],
        ['Frob:1', 'Frobnicator', {}, []],
      ]);
      const res = await api.post('/agents', { title: unique('unknown-cpn'), dsl });
      assertError(res, 400);
      assert.match(res.body.message, /Frobnicator/);
      assert.match(res.body.message, /Frob:1/);
    });

    it('a missing or null dsl is a 400', async () => {
      const missing = await api.post('/agents', { title: unique('no-dsl') });
      assertError(missing, 400, /dsl/i);
      const nul = await api.post('/agents', { title: unique('null-dsl'), dsl: null });
      assertError(nul, 400, /DSL/);
      const noTitle = await api.post('/agents', { dsl: messageCanvas('x') });
      assertError(noTitle, 400, /title/);
    });

    it('a downstream naming a missing component is a 400 naming both', async () => {
      const dsl = canvas([
        ['begin', 'Begin', {}, ['Message:Out']],
        ['Message:Out', 'Message', { content: ['x'] }, ['Message:Ghost']],
      ]);
      const res = await api.post('/agents', { title: unique('ghost'), dsl });
      assertError(res, 400);
      assert.match(res.body.message, /Message:Out/);
      assert.match(res.body.message, /Message:Ghost/);
    });

    it('an invalid DSL on update is a 400 and changes nothing', async () => {
      const id = await createAgent(api, messageCanvas('kept'));
      const before = (await api.get(`/agents/${id}`)).body.data;
      const res = await api.put(`/agents/${id}`, { title: unique('never'), dsl: llmCanvas({ temperature: 5 }) });
      assertError(res, 400, /temperature/);
      const after = (await api.get(`/agents/${id}`)).body.data;
      assert.deepEqual([after.title, after.dsl], [before.title, before.dsl]);
      assert.equal((await api.get(`/agents/${id}/versions`)).body.data.length, 1, 'no version is saved');
    });
  });

  describe('permission me / team and tenant isolation', () => {
    let owner: Api;
    let member: Api;
    let stranger: Api;
    let teamAgent: string;
    let privateAgent: string;
    let teamSession: string;
    let privateSession: string;

    before(async () => {
      const o = await newUser('agents-owner');
      const m = await newUser('agents-member');
      owner = o.api;
      member = m.api;
      stranger = (await newUser('agents-stranger')).api;
      const add = await owner.post(`/tenants/${o.userId}/users`, { email: m.email });
      assert.equal(add.status, 200, JSON.stringify(add.body));
      teamAgent = (await owner.post('/agents', { title: unique('team'), dsl: messageCanvas('team answer'), permission: 'team' })).body.data.id;
      privateAgent = await createAgent(owner, messageCanvas('private answer'), unique('private'));
      teamSession = (await owner.post(`/agents/${teamAgent}/sessions`, {})).body.data.id;
      privateSession = (await owner.post(`/agents/${privateAgent}/sessions`, {})).body.data.id;
    });

    /** Every agent route, for the agent `id` and its session `sid`. */
    const everyRoute = (id: string, sid: string): [string, (a: Api) => Promise<{ status: number; body: any }>][] => [
      ['GET /agents/{id}', (a) => a.get(`/agents/${id}`)],
      ['PUT /agents/{id}', (a) => a.put(`/agents/${id}`, { description: 'hijacked' })],
      ['PATCH /agents/{id}', (a) => a.patch(`/agents/${id}`, { description: 'hijacked' })],
      ['DELETE /agents/{id}', (a) => a.delete(`/agents/${id}`)],
      ['GET /agents/{id}/versions', (a) => a.get(`/agents/${id}/versions`)],
      ['GET /agents/{id}/versions/{vid}', (a) => a.get(`/agents/${id}/versions/${id}`)],
      ['PUT /agents/{id}/versions/{vid}', (a) => a.put(`/agents/${id}/versions/${id}`, { release: true })],
      ['DELETE /agents/{id}/versions/{vid}', (a) => a.delete(`/agents/${id}/versions/${id}`)],
      ['POST /agents/{id}/sessions', (a) => a.post(`/agents/${id}/sessions`, {})],
      ['GET /agents/{id}/sessions', (a) => a.get(`/agents/${id}/sessions`)],
      ['GET /agents/{id}/sessions/{sid}', (a) => a.get(`/agents/${id}/sessions/${sid}`)],
      ['DELETE /agents/{id}/sessions {ids}', (a) => a.delete(`/agents/${id}/sessions`, { ids: [sid] })],
      ['DELETE /agents/{id}/sessions {delete_all}', (a) => a.delete(`/agents/${id}/sessions`, { delete_all: true })],
      ['DELETE /agents/{id}/sessions/{sid}', (a) => a.delete(`/agents/${id}/sessions/${sid}`)],
      ['POST /agents/chat/completions', (a) => a.post('/agents/chat/completions', { agent_id: id, query: 'x' })],
      ['POST /agents/chat/completions {session_id}', (a) => a.post('/agents/chat/completions', { agent_id: id, session_id: sid, query: 'x' })],
      ['POST /agents/chat/completions openai-compatible', (a) => a.post('/agents/chat/completions', { agent_id: id, 'openai-compatible': true, messages: [{ role: 'user', content: 'x' }] })],
      ['POST /agents/{id}/completions', (a) => a.post(`/agents/${id}/completions`, { query: 'x' })],
      ['POST /agentbots/{id}/completions', (a) => a.post(`/agentbots/${id}/completions`, { query: 'x', stream: false })],
      ['POST /agents_openai/{id}/chat/completions', (a) => a.post(`/agents_openai/${id}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'x' }] })],
      ['POST /tasks/{sid}/cancel', (a) => a.post(`/tasks/${sid}/cancel`)],
    ];

    it('a stranger (another tenant) gets 404 on every agent route, and the agent and its sessions are untouched', async () => {
      for (const [id, sid] of [
        [teamAgent, teamSession],
        [privateAgent, privateSession],
      ] as const) {
        for (const [name, call] of everyRoute(id, sid)) {
          const res = await call(stranger);
          assert.equal(res.status, 404, `${name}: ${res.status} ${JSON.stringify(res.body)}`);
          if (name.startsWith('POST /tasks')) assert.doesNotMatch(JSON.stringify(res.body), new RegExp(id), 'a 404 does not reveal the agent');
        }
      }
      const list = await stranger.get('/agents');
      assert.ok(!list.body.data.canvas.some((a: any) => a.id === teamAgent || a.id === privateAgent), 'a stranger lists none of them');
      const agent = (await owner.get(`/agents/${privateAgent}`)).body.data;
      assert.notEqual(agent.description, 'hijacked');
      const sessions = await owner.get(`/agents/${privateAgent}/sessions`);
      assert.ok(sessions.body.data.some((s: any) => s.id === privateSession), 'the session is still there');
    });

    it("a stranger cannot reach another tenant's session through an agent of their own (404, not 400)", async () => {
      const own = await createAgent(stranger, messageCanvas('mine'), unique('stranger-own'));
      const res = await stranger.post('/agents/chat/completions', { agent_id: own, session_id: privateSession, query: 'x', stream: false });
      assert.equal(res.status, 404, JSON.stringify(res.body));
    });

    it('a team member lists, reads, runs and edits a team agent', async () => {
      const list = await member.get('/agents');
      const ids = list.body.data.canvas.map((a: any) => a.id);
      assert.ok(ids.includes(teamAgent), 'the team agent is listed');
      assert.ok(!ids.includes(privateAgent), 'the private agent is not listed');
      assert.equal((await member.get(`/agents/${teamAgent}`)).status, 200);
      assert.equal((await member.get(`/agents/${teamAgent}/sessions/${teamSession}`)).status, 200);
      assert.equal((await ask(member, teamAgent)).content, 'team answer');
      const upd = await member.put(`/agents/${teamAgent}`, { description: 'edited by a member' });
      assert.equal(upd.status, 200, JSON.stringify(upd.body));
      assert.equal((await owner.get(`/agents/${teamAgent}`)).body.data.description, 'edited by a member');
    });

    it("a team member gets 403 on every route of the owner's private (me) agent", async () => {
      for (const [name, call] of everyRoute(privateAgent, privateSession)) {
        const res = await call(member);
        assert.equal(res.status, 403, `${name}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code ?? res.body.error?.code, name.includes('openai') ? '403' : 403, 'the envelope (or OpenAI error) says 403 too');
      }
    });

    it('only the owner deletes an agent or changes its permission: a team member gets 403', async () => {
      const del = await member.delete(`/agents/${teamAgent}`);
      assertError(del, 403, /owner/);
      assertError(await member.put(`/agents/${teamAgent}`, { permission: 'me' }), 403);
      assert.equal((await owner.get(`/agents/${teamAgent}`)).status, 200, 'still there');
      const mine = (await owner.post('/agents', { title: unique('owner-deletes'), dsl: messageCanvas('x'), permission: 'team' })).body.data.id;
      assert.equal((await owner.delete(`/agents/${mine}`)).status, 200);
    });
  });

  describe('import and export', () => {
    for (const name of ['your_starter_dataset_chatbot', 'customer_feedback_dispatcher', 'user_interaction']) {
      it(`a DSL exported from RAGFlow (${name}) imports unchanged and exports with RAGFlow's keys`, async () => {
        const original = fixture(name);
        const id = await createAgent(api, original);
        const exported = (await api.get(`/agents/${id}`)).body.data.dsl;
        for (const key of Object.keys(original)) assert.ok(key in exported, `key ${key} is kept`);
        assert.deepEqual(exported.components, original.components, 'components come back as given');
        assert.deepEqual(exported.graph, original.graph, 'the editor layout comes back as given');
        assert.equal((await api.post('/agents', { title: `${name}-reimport-${Date.now()}`, dsl: exported })).status, 200, 'the export imports again');
      });
    }
  });

  describe('versions and release', () => {
    it('create saves a version; PUT with release: true publishes; versions are listed newest first', async () => {
      const id = await createAgent(api, messageCanvas('A'));
      let versions = (await api.get(`/agents/${id}/versions`)).body.data;
      assert.equal(versions.length, 1);
      assert.equal(versions[0].release, false);
      assert.equal((await api.get(`/agents/${id}`)).body.data.release, false);

      await sleep(5);
      const pub = await api.put(`/agents/${id}`, { dsl: messageCanvas('B'), release: true });
      assert.equal(pub.status, 200, JSON.stringify(pub.body));
      versions = (await api.get(`/agents/${id}/versions`)).body.data;
      assert.equal(versions.length, 2);
      assert.equal(versions[0].release, true);
      assert.deepEqual(versions[0].dsl.components['Message:Out'].obj.params.content, ['B']);
      assert.deepEqual(versions[1].dsl.components['Message:Out'].obj.params.content, ['A']);
      const agent = (await api.get(`/agents/${id}`)).body.data;
      assert.equal(agent.release, true);
      assert.ok(Number.isInteger(agent.last_publish_time));
    });

    it('a session created with release: true runs the latest published DSL; a plain session runs the draft', async () => {
      const id = await createAgent(api, messageCanvas('draft zero'));
      await sleep(5);
      assert.equal((await api.put(`/agents/${id}`, { dsl: messageCanvas('published A'), release: true })).status, 200);
      await sleep(5);
      assert.equal((await api.put(`/agents/${id}`, { dsl: messageCanvas('draft B') })).status, 200);

      const released = await api.post(`/agents/${id}/sessions`, { release: true });
      assert.equal(released.status, 200, JSON.stringify(released.body));
      assert.ok(released.body.data.version_title, 'the session names the version it runs');
      const plain = (await api.post(`/agents/${id}/sessions`, {})).body.data;
      assert.equal(plain.version_title, null);

      assert.equal((await ask(api, id, { session_id: released.body.data.id })).content, 'published A');
      assert.equal((await ask(api, id, { session_id: plain.id })).content, 'draft B');
      const viaQuery = await api.request('POST', `/agents/${id}/sessions`, { body: {}, query: { release: 'true' } });
      assert.equal(viaQuery.status, 200, JSON.stringify(viaQuery.body));
      assert.equal((await ask(api, id, { session_id: viaQuery.body.data.id })).content, 'published A', 'release may be given in the query, as text');
    });

    it('a saved version can be read, published, withdrawn and deleted; release sessions follow the latest published one', async () => {
      const id = await createAgent(api, messageCanvas('v1'));
      await sleep(5);
      await api.put(`/agents/${id}`, { dsl: messageCanvas('v2') });
      const [v2, v1] = (await api.get(`/agents/${id}/versions`)).body.data;
      const one = await api.get(`/agents/${id}/versions/${v1.id}`);
      assert.deepEqual(one.body.data.dsl.components['Message:Out'].obj.params.content, ['v1']);
      assert.equal((await api.put(`/agents/${id}/versions/${v1.id}`, { release: true })).body.data.release, true);
      const session = (await api.post(`/agents/${id}/sessions`, { release: true })).body.data;
      assert.equal((await ask(api, id, { session_id: session.id })).content, 'v1', 'the published old version runs, not the draft');
      assert.equal((await api.put(`/agents/${id}/versions/${v1.id}`, { release: false })).status, 200);
      assertError(await api.post(`/agents/${id}/sessions`, { release: true }), 400, /No available published version/);
      assert.equal((await api.delete(`/agents/${id}/versions/${v2.id}`)).status, 200);
      assert.deepEqual((await api.get(`/agents/${id}/versions`)).body.data.map((v: any) => v.id), [v1.id]);
      assertError(await api.get(`/agents/${id}/versions/${v2.id}`), 404, /not found/);
    });

    it('a release session when nothing is published is a 400 "No available published version"', async () => {
      const id = await createAgent(api, messageCanvas('never published'));
      await api.put(`/agents/${id}`, { dsl: messageCanvas('still a draft') });
      const res = await api.post(`/agents/${id}/sessions`, { release: true });
      assertError(res, 400, /No available published version/);
      assertError(await api.post(`/agents/${id}/sessions`, { release: 'true' }), 400, /No available published version/);
      const list = await api.get(`/agents/${id}/sessions`);
      assert.equal(list.body.total, 0, 'no session was created');
    });
  });

  describe('sessions', () => {
    const taskCanvas = () =>
      canvas([
        ['begin', 'Begin', { mode: 'task', prologue: 'Tell me your name.', inputs: { name: { name: 'Name', type: 'line', optional: false } } }, ['Message:Greet']],
        ['Message:Greet', 'Message', { content: ['Hello {begin@name}'] }, []],
      ]);

    it('create stores Begin parameters given as keyword values (task mode, field name) and opens with the prologue', async () => {
      const id = await createAgent(api, taskCanvas());
      const res = await api.post(`/agents/${id}/sessions`, { name: 'Ada' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const session = res.body.data;
      assert.match(session.id, /^[0-9a-f]{32}$/);
      assert.equal(session.agent_id, id);
      assert.equal(session.source, 'agent');
      assert.deepEqual(session.message.map((m: any) => [m.role, m.content]), [['assistant', 'Tell me your name.']]);
      assert.equal(session.dsl.components.begin.obj.params.inputs.name.value, 'Ada');
      const stored = (await api.get(`/agents/${id}/sessions/${session.id}`)).body.data;
      assert.equal(stored.dsl.components.begin.obj.params.inputs.name.value, 'Ada');
      assert.equal((await ask(api, id, { session_id: session.id, query: '' })).content, 'Hello Ada', 'the run reads the stored value');
      const agent = (await api.get(`/agents/${id}`)).body.data;
      assert.equal(agent.dsl.components.begin.obj.params.inputs.name.value, undefined, "the agent's DSL is not changed");
    });

    it('a Begin without a prologue opens with the default greeting; enablePrologue false opens with none', async () => {
      const plain = await createAgent(api, canvas([['begin', 'Begin', {}, []]]));
      const greeted = (await api.post(`/agents/${plain}/sessions`, {})).body.data;
      assert.deepEqual(greeted.message.map((m: any) => m.content), ["Hi! I'm your smart assistant. What can I do for you?"]);
      const silent = await createAgent(api, canvas([['begin', 'Begin', { enablePrologue: false, prologue: 'unused' }, []]]));
      assert.deepEqual((await api.post(`/agents/${silent}/sessions`, {})).body.data.message, []);
    });

    it('create takes user_id from the body or the query', async () => {
      const id = await createAgent(api, messageCanvas('x'));
      const body = (await api.post(`/agents/${id}/sessions`, { user_id: 'end-user-1' })).body.data;
      assert.equal(body.user_id, 'end-user-1');
      const query = (await api.request('POST', `/agents/${id}/sessions`, { body: {}, query: { user_id: 'end-user-2' } })).body.data;
      assert.equal(query.user_id, 'end-user-2');
      const filtered = await api.get(`/agents/${id}/sessions`, { user_id: 'end-user-2' });
      assert.deepEqual(filtered.body.data.map((s: any) => s.id), [query.id]);
    });

    it('list answers {code: 0, data: [...], total} with total at the top level, most recently updated first', async () => {
      const id = await createAgent(api, messageCanvas('turn'));
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await api.post(`/agents/${id}/sessions`, {})).body.data.id);
        await sleep(5);
      }
      const list = await api.get(`/agents/${id}/sessions`);
      assert.equal(list.status, 200);
      assert.equal(list.body.code, 0);
      assert.equal(list.body.total, 3);
      assert.ok(Array.isArray(list.body.data));
      assert.deepEqual(list.body.data.map((s: any) => s.id), [ids[2], ids[1], ids[0]]);

      await ask(api, id, { session_id: ids[0] });
      const after = await api.get(`/agents/${id}/sessions`);
      assert.deepEqual(after.body.data.map((s: any) => s.id), [ids[0], ids[2], ids[1]], 'a turn moves its session first');
      const byCreate = await api.get(`/agents/${id}/sessions`, { orderby: 'create_time', desc: false });
      assert.deepEqual(byCreate.body.data.map((s: any) => s.id), ids);
      const paged = await api.get(`/agents/${id}/sessions`, { page: 2, page_size: 2 });
      assert.equal(paged.body.total, 3);
      assert.deepEqual(paged.body.data.map((s: any) => s.id), [ids[1]]);
      const byId = await api.get(`/agents/${id}/sessions`, { id: ids[1] });
      assert.deepEqual(byId.body.data.map((s: any) => s.id), [ids[1]]);
      const noDsl = await api.get(`/agents/${id}/sessions`, { dsl: false });
      assert.ok(noDsl.body.data.every((s: any) => s.dsl === undefined), 'dsl=false leaves the DSL out');
      assert.ok(list.body.data.every((s: any) => s.dsl && s.agent_id === id));
    });

    it('get of a missing, malformed or other-agent session id is a 404 with a message, never a 500', async () => {
      const id = await createAgent(api, messageCanvas('x'));
      const otherAgent = await createAgent(api, messageCanvas('y'));
      const otherSession = (await api.post(`/agents/${otherAgent}/sessions`, {})).body.data.id;
      for (const sid of [MISSING, 'not-a-session', 'ABC', '1'.repeat(40), otherSession]) {
        const res = await api.get(`/agents/${id}/sessions/${encodeURIComponent(sid)}`);
        assertError(res, 404, /[Ss]ession/);
      }
    });

    it('delete by ids, one by path, and delete_all; only unknown ids is an error and deletes nothing', async () => {
      const id = await createAgent(api, messageCanvas('x'));
      const make = async () => (await api.post(`/agents/${id}/sessions`, {})).body.data.id as string;
      const [s1, s2, s3, s4, s5] = [await make(), await make(), await make(), await make(), await make()];
      const total = async () => (await api.get(`/agents/${id}/sessions`)).body.total;

      const bad = await api.delete(`/agents/${id}/sessions`, { ids: [MISSING] });
      assert.ok(bad.status === 404 || bad.status === 400, JSON.stringify(bad.body));
      assert.equal(await total(), 5, 'a failed delete removes nothing');

      const byIds = await api.delete(`/agents/${id}/sessions`, { ids: [s1, s2] });
      assert.equal(byIds.status, 200, JSON.stringify(byIds.body));
      assert.equal(byIds.body.code, 0);
      assert.equal(await total(), 3);
      assertError(await api.get(`/agents/${id}/sessions/${s1}`), 404);

      const one = await api.delete(`/agents/${id}/sessions/${s3}`);
      assert.equal(one.status, 200, JSON.stringify(one.body));
      assertError(await api.get(`/agents/${id}/sessions/${s3}`), 404);
      assertError(await api.delete(`/agents/${id}/sessions/${s3}`), 404);

      const nothing = await api.delete(`/agents/${id}/sessions`, {});
      assert.equal(nothing.status, 200);
      assert.equal(await total(), 2, 'no ids and no delete_all deletes nothing');

      const all = await api.delete(`/agents/${id}/sessions`, { delete_all: true });
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.equal(await total(), 0);
      assertError(await api.get(`/agents/${id}/sessions/${s4}`), 404);
      assertError(await api.get(`/agents/${id}/sessions/${s5}`), 404);
    });

    it('a batch agent-session delete with unknown or duplicate ids deletes the valid ones: code 0, data {success_count, errors}', async () => {
      const id = await createAgent(api, messageCanvas('x'));
      const make = async () => (await api.post(`/agents/${id}/sessions`, {})).body.data.id as string;
      const [s1, s2] = [await make(), await make()];
      const res = await api.delete(`/agents/${id}/sessions`, { ids: [s1, MISSING, s1] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.code, 0);
      assert.equal(res.body.data.success_count, 1);
      assert.equal(res.body.data.errors.length, 2, JSON.stringify(res.body.data.errors));
      assert.ok(res.body.data.errors.some((e: string) => e.includes(MISSING)), 'the unknown id is named');
      assert.ok(res.body.data.errors.some((e: string) => /duplicate/i.test(e) && e.includes(s1)), 'the duplicate id is named');
      assertError(await api.get(`/agents/${id}/sessions/${s1}`), 404);
      assert.equal((await api.get(`/agents/${id}/sessions/${s2}`)).status, 200);
    });
  });

  describe('completion errors', () => {
    it('a missing agent_id is a 400', async () => {
      const res = await api.post('/agents/chat/completions', { query: 'x', stream: false });
      assertError(res, 400, /agent_id/);
      const streamed = await api.post('/agents/chat/completions', { query: 'x', stream: true });
      assertError(streamed, 400, /agent_id/);
    });

    it('an unknown agent is a 404; an unknown or malformed session_id is a 404', async () => {
      assertError(await api.post('/agents/chat/completions', { agent_id: MISSING, query: 'x' }), 404);
      const id = await createAgent(api, messageCanvas('x'));
      assertError(await api.post('/agents/chat/completions', { agent_id: id, session_id: MISSING, query: 'x' }), 404, /[Ss]ession/);
      assertError(await api.post('/agents/chat/completions', { agent_id: id, session_id: 'nope', query: 'x', stream: true }), 404, /[Ss]ession/);
    });

    it('a session of another agent is a 400 and runs nothing', async () => {
      const a = await createAgent(api, messageCanvas('A'));
      const b = await createAgent(api, messageCanvas('B'));
      const sessionOfB = (await api.post(`/agents/${b}/sessions`, {})).body.data.id;
      const res = await api.post('/agents/chat/completions', { agent_id: a, session_id: sessionOfB, query: 'x', stream: false });
      assertError(res, 400, /does not belong/);
      const stored = (await api.get(`/agents/${b}/sessions/${sessionOfB}`)).body.data;
      assert.equal(stored.message.length, 1, 'only the prologue');
    });
  });
});
