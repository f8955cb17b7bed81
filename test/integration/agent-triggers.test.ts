import assert from 'node:assert/strict';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { SignJWT } from 'jose';
import { echoAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { Api, eventually, newUser } from './client.js';
import { userWithModel } from './chat-helpers.js';
import { canvas, createAgent, llmCanvas, messageCanvas } from './agent-helpers.js';
import { harness } from './harness.js';

type Params = Record<string, unknown>;

/** A Begin in webhook mode: anonymous calls allowed unless `security` says otherwise. */
function webhookBegin(extra: Params = {}): Params {
  return { mode: 'Webhook', prologue: '', methods: ['POST'], content_types: 'application/json', execution_mode: 'Streaming', security: { auth_type: 'none', allow_anonymous: true }, ...extra };
}

/** Begin (webhook) → Message: answers with the template, no model needed. */
const webhookMessageAgent = (template: string, begin: Params = {}) => messageCanvas(template, webhookBegin(begin));

const bodySchema = { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, count: { type: 'number' } } } };

describe('agent triggers: the webhook and schedules', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;
  let anon: Api;

  before(async () => {
    fake = await startFakeOpenAI();
    fake.behaviour = { ...fake.behaviour, answer: echoAnswer, ttftMs: 0, tokenDelayMs: 0 };
    ({ api } = await userWithModel('triggers', fake.baseUrl));
    anon = new Api((await harness()).url);
  });
  after(() => fake.close());

  /** A webhook call without Cairn's API key. */
  const call = (agentId: string, body: unknown, options: { method?: string; headers?: Record<string, string>; query?: Params; raw?: string; path?: string } = {}) =>
    anon.request(options.method ?? 'POST', `/agents/${agentId}/webhook${options.path ?? ''}`, {
      query: options.query,
      raw: options.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      headers: { 'Content-Type': 'application/json', ...options.headers },
    });

  describe('webhook', () => {
    it('runs the agent without an API key and answers with the result (Streaming): body and query reach Begin by the schema, through the model', async () => {
      const dsl = llmCanvas({ prompts: [{ role: 'user', content: 'order {begin@body.name} x{begin@body.count} in {begin@query.lang}' }] }, webhookBegin({ schema: { ...bodySchema, query: { properties: { lang: { type: 'string' } } } } }));
      const agentId = await createAgent(api, dsl);
      const res = await call(agentId, { name: 'tea', count: '3', ignored: 'x' }, { query: { lang: 'en' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.success, true);
      assert.equal(res.body.message, 'Echo: order tea x3 in en');
      const sessionId = res.headers.get('x-cairn-session-id')!;
      const session = (await api.get(`/agents/${agentId}/sessions/${sessionId}`)).body.data;
      assert.equal(session.source, 'webhook');
      const listed = (await api.get(`/agents/${agentId}/sessions`)).body.data;
      assert.ok(listed.some((s: any) => s.id === sessionId && s.source === 'webhook'), 'the webhook run is listed with the sessions');
    });

    it('Immediately answers at once with the configured status and body while the run goes on durably', async () => {
      const agentId = await createAgent(api, webhookMessageAgent('got {begin@body.name}', { execution_mode: 'Immediately', response: { status: 202, body_template: '{"accepted": true}' }, schema: bodySchema }));
      const res = await call(agentId, { name: 'parcel' });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.deepEqual(res.body, { accepted: true });
      const sessionId = res.headers.get('x-cairn-session-id')!;
      const answer = await eventually(async () => {
        const s = (await api.get(`/agents/${agentId}/sessions/${sessionId}`)).body.data;
        return s.message.find((m: any) => m.role === 'assistant' && m.content.startsWith('got'));
      });
      assert.equal(answer.content, 'got parcel');
    });

    it('refuses a method, a content type or a body the Begin does not accept, naming what is wrong', async () => {
      const agentId = await createAgent(api, webhookMessageAgent('ok', { schema: bodySchema }));
      const get = await call(agentId, undefined, { method: 'GET' });
      assert.equal(get.status, 405);
      assert.match(get.body.message, /HTTP method 'GET' is not allowed.*POST/);
      const text = await call(agentId, undefined, { raw: 'name=tea', headers: { 'Content-Type': 'text/plain' } });
      assert.equal(text.status, 415);
      assert.match(text.body.message, /expects 'application\/json', got 'text\/plain'/);
      const missing = await call(agentId, { count: 1 });
      assert.equal(missing.status, 400);
      assert.match(missing.body.message, /body is missing the required field 'name'/);
      const wrongType = await call(agentId, { name: 'tea', count: 'many' });
      assert.equal(wrongType.status, 400);
      assert.match(wrongType.body.message, /body\.count must be number/);
      const malformed = await call(agentId, undefined, { raw: '{not json' });
      assert.equal(malformed.status, 400);
    });

    it('a form-urlencoded webhook reads its fields, cast to the schema types', async () => {
      const agentId = await createAgent(api, webhookMessageAgent('{begin@body.name}:{begin@body.count}', { content_types: 'application/x-www-form-urlencoded', schema: bodySchema }));
      const res = await call(agentId, undefined, { raw: 'name=tea&count=7', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.message, 'tea:7');
    });

    it('token auth: a call without the token or with a wrong one is 401; the right token runs', async () => {
      const agentId = await createAgent(api, webhookMessageAgent('ok', { security: { auth_type: 'token', token: { token_header: 'X-Hook-Token', token_value: 's3cret' } } }));
      assert.equal((await call(agentId, {})).status, 401);
      const wrong = await call(agentId, {}, { headers: { 'X-Hook-Token': 'nope' } });
      assert.equal(wrong.status, 401);
      assert.match(wrong.body.message, /Invalid token authentication/);
      assert.equal((await call(agentId, {}, { headers: { 'X-Hook-Token': 's3cret' } })).status, 200);
    });

    it('basic auth checks user and password', async () => {
      const agentId = await createAgent(api, webhookMessageAgent('ok', { security: { auth_type: 'basic', basic_auth: { username: 'hook', password: 'pw' } } }));
      const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
      assert.equal((await call(agentId, {}, { headers: { Authorization: basic('hook', 'bad') } })).status, 401);
      assert.equal((await call(agentId, {}, { headers: { Authorization: basic('hook', 'pw') } })).status, 200);
    });

    it('jwt auth verifies the signature, audience and required claims', async () => {
      const secret = 'a-long-webhook-signing-secret-0123456789';
      const agentId = await createAgent(api, webhookMessageAgent('ok', { security: { auth_type: 'jwt', jwt: { secret, algorithm: 'hs256', audience: 'cairn', required_claims: ['tenant'] } } }));
      const sign = (claims: Params, key = secret) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setAudience('cairn').setExpirationTime('5m').sign(new TextEncoder().encode(key));
      const good = await call(agentId, {}, { headers: { Authorization: `Bearer ${await sign({ tenant: 't1' })}` } });
      assert.equal(good.status, 200, JSON.stringify(good.body));
      const noClaim = await call(agentId, {}, { headers: { Authorization: `Bearer ${await sign({})}` } });
      assert.equal(noClaim.status, 401);
      assert.match(noClaim.body.message, /missing claim\(s\) tenant/);
      assert.equal((await call(agentId, {}, { headers: { Authorization: `Bearer ${await sign({ tenant: 't1' }, 'another-secret-another-secret-000')}` } })).status, 401);
    });

    it('anonymous calls need allow_anonymous; the IP whitelist, body size and rate limit are enforced (calls over the rate are not logged)', async () => {
      const closed = await createAgent(api, webhookMessageAgent('ok', { security: { auth_type: 'none' } }));
      const anonymous = await call(closed, {});
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.body.message, /allow_anonymous/);
      const whitelisted = await createAgent(api, webhookMessageAgent('ok', { security: { auth_type: 'none', allow_anonymous: true, ip_whitelist: ['10.0.0.0/8'] } }));
      const denied = await call(whitelisted, {});
      assert.equal(denied.status, 403);
      assert.match(denied.body.message, /not allowed by the webhook's IP whitelist/);
      const small = await createAgent(api, webhookMessageAgent('ok', { security: { auth_type: 'none', allow_anonymous: true, max_body_size: '1KB' } }));
      assert.equal((await call(small, { text: 'x'.repeat(2048) })).status, 413);
      const limited = await createAgent(api, webhookMessageAgent('ok', { execution_mode: 'Immediately', security: { auth_type: 'none', allow_anonymous: true, rate_limit: { limit: 2, per: 'minute' } } }));
      assert.equal((await call(limited, {})).status, 200);
      assert.equal((await call(limited, {})).status, 200);
      assert.equal((await call(limited, {})).status, 429);
      assert.equal((await api.get(`/agents/${limited}/webhook/logs`)).body.data.total, 2, 'a call over the rate is not logged');
    });

    it('an agent whose Begin is not in webhook mode is a 400 naming its mode; webhook settings Cairn cannot enforce are refused on save', async () => {
      const agentId = await createAgent(api, messageCanvas('hi'));
      const res = await call(agentId, {});
      assert.equal(res.status, 400);
      assert.match(res.body.message, /has no webhook: its Begin component is in 'conversational' mode/);
      const bad = await api.post('/agents', { title: `bad-hook-${Date.now()}`, dsl: webhookMessageAgent('x', { security: { auth_type: 'hmac' } }) });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /security\.auth_type/);
    });

    it("the test call runs as the owner without the Begin's auth; the logs list calls with their runs; other tenants see neither", async () => {
      const agentId = await createAgent(api, webhookMessageAgent('tested', { security: { auth_type: 'token', token: { token_header: 'X-Hook-Token', token_value: 's3cret' } } }));
      const tested = await api.request('POST', `/agents/${agentId}/webhook/test`, { body: {} });
      assert.equal(tested.status, 200, JSON.stringify(tested.body));
      assert.equal(tested.body.message, 'tested');
      assert.equal((await call(agentId, {})).status, 401);
      const logs = (await api.get(`/agents/${agentId}/webhook/logs`)).body.data;
      assert.equal(logs.total, 2);
      const [refused, test] = logs.logs;
      assert.deepEqual([refused.trigger, refused.method, refused.status, refused.session_id], ['webhook', 'POST', 401, null]);
      assert.match(refused.error, /Invalid token/);
      assert.deepEqual([test.trigger, test.status, test.run_status], ['webhook_test', 200, 'finished']);
      assert.equal(test.session_id, tested.headers.get('x-cairn-session-id'));
      const stranger = (await newUser('stranger')).api;
      assert.equal((await stranger.get(`/agents/${agentId}/webhook/logs`)).status, 404);
      assert.equal((await stranger.request('POST', `/agents/${agentId}/webhook/test`, { body: {} })).status, 404);
    });
  });

  describe('schedules', () => {
    let temporal: Client;
    before(async () => {
      temporal = new Client({ connection: await Connection.connect({ address: (await harness()).temporal.address }) });
    });
    after(() => temporal.connection.close());

    const scheduleSessions = async (agentId: string) => (await api.get(`/agents/${agentId}/sessions`, { page_size: 100 })).body.data.filter((s: any) => s.source === 'schedule');

    it('an interval schedule runs the agent again and again as new sessions; pause stops it, resume restarts it, delete removes it from Temporal', async () => {
      const dsl = canvas([
        ['begin', 'Begin', { mode: 'task', prologue: '', inputs: { topic: { name: 'Topic', type: 'line', optional: false } } }, ['Message:Out']],
        ['Message:Out', 'Message', { content: ['report on {begin@topic}'] }, []],
      ]);
      const agentId = await createAgent(api, dsl);
      const created = await api.post(`/agents/${agentId}/schedules`, { interval: '1s', inputs: { topic: 'tides' }, timezone: 'Europe/Berlin' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const sid = created.body.data.id;
      assert.equal(created.body.data.interval, 1);
      assert.equal(created.body.data.paused, false);
      const twice = await eventually(async () => {
        const sessions = await scheduleSessions(agentId);
        return sessions.filter((s: any) => s.message.some((m: any) => m.content === 'report on tides')).length >= 2 && sessions;
      }, 20_000, 250);
      assert.ok(twice.length >= 2);
      const listed = (await api.get(`/agents/${agentId}/schedules`)).body.data;
      assert.equal(listed.total, 1);
      const shown = listed.schedules[0];
      assert.ok(shown.next_run_times.length > 0 && shown.next_run_times[0] >= Math.floor(Date.now() / 1000) - 1, 'next run times are shown');
      assert.ok(shown.recent_runs.length >= 2 && shown.recent_runs.every((r: any) => r.trigger === 'schedule' && r.session_id));

      const paused = await api.post(`/agents/${agentId}/schedules/${sid}/pause`);
      assert.equal(paused.body.data.paused, true);
      await new Promise((r) => setTimeout(r, 1500)); // a run started just before the pause may still land
      const atPause = (await scheduleSessions(agentId)).length;
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal((await scheduleSessions(agentId)).length, atPause, 'no run while paused');

      const resumed = await api.post(`/agents/${agentId}/schedules/${sid}/resume`);
      assert.equal(resumed.body.data.paused, false);
      await eventually(async () => (await scheduleSessions(agentId)).length > atPause, 15_000, 250);

      assert.equal((await api.delete(`/agents/${agentId}/schedules/${sid}`)).status, 200);
      assert.equal((await api.get(`/agents/${agentId}/schedules/${sid}`)).status, 404);
      await assert.rejects(temporal.schedule.getHandle(`agent-${agentId}-schedule-${sid}`).describe(), ScheduleNotFoundError);
    });

    it('a cron schedule shows its next runs in its time zone; bad cron, interval or time zone is a 400 naming it', async () => {
      const agentId = await createAgent(api, messageCanvas('tick'));
      const ok = await api.post(`/agents/${agentId}/schedules`, { cron: '30 9 * * MON-FRI', timezone: 'Asia/Tokyo', paused: true });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.data.paused, true);
      const next = new Date(ok.body.data.next_run_times[0] * 1000);
      assert.equal(next.getUTCHours(), 0, '09:30 in Tokyo is 00:30 UTC');
      assert.equal(next.getUTCMinutes(), 30);
      const bad = async (body: Params, pattern: RegExp) => {
        const res = await api.post(`/agents/${agentId}/schedules`, body);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(res.body.message, pattern);
      };
      await bad({ cron: '61 * * * *' }, /minute field '61'/);
      await bad({ cron: '* * *' }, /expected 5 fields/);
      await bad({ interval: 'soon' }, /Invalid interval "soon"/);
      await bad({ interval: 0 }, /at least 1/);
      await bad({ interval: 60, timezone: 'Mars/Olympus' }, /Invalid timezone "Mars\/Olympus"/);
      await bad({ cron: '* * * * *', interval: 60 }, /either `cron`.*or `interval`/);
      assert.equal((await api.get(`/agents/${agentId}/schedules`)).body.data.total, 1, 'refused schedules leave nothing behind');
    });

    it("another tenant neither sees nor changes an agent's schedules; deleting the agent deletes its schedules from Temporal", async () => {
      const agentId = await createAgent(api, messageCanvas('tick'));
      const sid = (await api.post(`/agents/${agentId}/schedules`, { interval: '1h' })).body.data.id;
      const stranger = (await newUser('stranger')).api;
      assert.equal((await stranger.get(`/agents/${agentId}/schedules`)).status, 404);
      assert.equal((await stranger.post(`/agents/${agentId}/schedules`, { interval: 60 })).status, 404);
      assert.equal((await stranger.post(`/agents/${agentId}/schedules/${sid}/pause`)).status, 404);
      assert.equal((await stranger.delete(`/agents/${agentId}/schedules/${sid}`)).status, 404);
      const handle = temporal.schedule.getHandle(`agent-${agentId}-schedule-${sid}`);
      assert.equal((await handle.describe()).state.paused, false);
      assert.equal((await api.delete(`/agents/${agentId}`)).status, 200);
      await assert.rejects(handle.describe(), ScheduleNotFoundError);
    });
  });
});
