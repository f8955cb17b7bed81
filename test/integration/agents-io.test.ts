import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { newUser, type Api } from './client.js';
import { canvas, createAgent } from './agent-helpers.js';
import { postSse } from './chat-helpers.js';

describe('agents: Invoke and CodeExec components run in the worker', function () {
  this.timeout(120_000);
  let api: Api;
  let server: http.Server;
  let base: string;
  const seen: { method: string; url: string; body: string; auth?: string }[] = [];

  before(async () => {
    ({ api } = await newUser('agents-io'));
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, body, auth: req.headers.authorization });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ temperature: 21, city: new URL(req.url!, 'http://x').searchParams.get('city') ?? JSON.parse(body || '{}').city }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('Invoke sends the request with headers and variables from references, and its result feeds the next component', async () => {
    const dsl = canvas([
      ['begin', 'Begin', { mode: 'task', inputs: { city: { name: 'city', type: 'line' } } }, ['Invoke:Weather']],
      ['Invoke:Weather', 'Invoke', { url: `${base}/weather`, method: 'post', headers: '{"Authorization": "Bearer {sys.user_id}"}', variables: [{ key: 'city', ref: 'begin@city' }], datatype: 'json' }, ['CodeExec:Format']],
      ['CodeExec:Format', 'CodeExec', { lang: 'javascript', script: 'function main({ raw }) { const w = JSON.parse(raw); return `${w.city}: ${w.temperature} C`; }', arguments: { raw: 'Invoke:Weather@result' }, outputs: { result: { type: 'string', value: '' } } }, ['Message:Out']],
      ['Message:Out', 'Message', { content: ['{CodeExec:Format@result}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, stream: false, user_id: 'u-42', inputs: { city: { value: 'Oslo' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'Oslo: 21 C');
    const request = seen.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.deepEqual(JSON.parse(request.body), { city: 'Oslo' });
    assert.equal(request.auth, 'Bearer u-42');
  });

  it('a CodeExec endless loop fails its component at the time limit, naming it, and the worker keeps serving', async () => {
    const dsl = canvas([
      ['begin', 'Begin', {}, ['CodeExec:Spin']],
      ['CodeExec:Spin', 'CodeExec', { lang: 'javascript', script: 'function main() { for (;;) {} }', timeout: 2 }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'x', stream: false });
    assert.equal(res.status, 400, 'a script that never ends is the canvas\'s fault');
    assert.match(res.body.message, /CodeExec:Spin.*(time|timed out)/i);
    assert.deepEqual(res.body.data, { component_id: 'CodeExec:Spin', component_name: 'node CodeExec:Spin', component_type: 'CodeExec' });
    const ok = await createAgent(api, canvas([
      ['begin', 'Begin', {}, ['CodeExec:Add']],
      ['CodeExec:Add', 'CodeExec', { lang: 'javascript', script: 'function main() { return 1 + 1; }' }, ['Message:M']],
      ['Message:M', 'Message', { content: ['{CodeExec:Add@result}'] }, []],
    ]));
    const again = await api.post('/agents/chat/completions', { agent_id: ok, query: 'x', stream: false });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.data.data.content, '2');
  });

  it("a CodeExec script error is the canvas's fault: 400 naming the component, and code 400 in the stream's error frame", async () => {
    const agentId = await createAgent(api, canvas([
      ['begin', 'Begin', {}, ['CodeExec:Boom']],
      ['CodeExec:Boom', 'CodeExec', { lang: 'javascript', script: "function main() { throw new Error('bad input'); }" }, []],
    ]));
    const whole = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'x', stream: false });
    assert.equal(whole.status, 400, JSON.stringify(whole.body));
    assert.equal(whole.body.code, 400);
    assert.match(whole.body.message, /^Component 'CodeExec:Boom' \(CodeExec, named 'node CodeExec:Boom'\) failed: .*bad input/);
    assert.deepEqual(whole.body.data, { component_id: 'CodeExec:Boom', component_name: 'node CodeExec:Boom', component_type: 'CodeExec' });
    const streamed = await postSse(api, '/agents/chat/completions', { agent_id: agentId, query: 'x', stream: true });
    const frame = streamed.frames.find((f: any) => f !== '[DONE]' && f.code !== undefined);
    assert.equal(frame?.code, 400, streamed.raw);
    assert.equal(frame.data.component_id, 'CodeExec:Boom');
    assert.equal(streamed.frames.at(-1), '[DONE]');
  });

  it('a component wired to itself is refused when the agent is saved (POST and PUT), 400 naming it', async () => {
    const looped = canvas([
      ['begin', 'Begin', {}, ['Message:Echo']],
      ['Message:Echo', 'Message', { content: ['again'] }, ['Message:Echo']],
    ]);
    const created = await api.post('/agents', { title: `self-wired-${process.pid}`, dsl: looped });
    assert.equal(created.status, 400, JSON.stringify(created.body));
    assert.match(created.body.message, /Component 'Message:Echo' \(Message\): field 'downstream' wires the component to itself/);
    const agentId = await createAgent(api, canvas([['begin', 'Begin', {}, ['Message:Echo']], ['Message:Echo', 'Message', { content: ['once'] }, []]]));
    const updated = await api.put(`/agents/${agentId}`, { dsl: looped });
    assert.equal(updated.status, 400, JSON.stringify(updated.body));
    assert.match(updated.body.message, /Message:Echo.*wires the component to itself/);
  });

  it('an Iteration over 200 items runs; over CAIRN_AGENT_ITERATION_MAX_ITEMS (201) it fails with 400 naming the Iteration, the limit and the setting', async () => {
    const dsl = canvas([
      ['begin', 'Begin', { mode: 'task', inputs: { items: { name: 'items', type: 'line' } } }, ['Iteration:Each']],
      ['Iteration:Each', 'Iteration', { items_ref: 'begin@items', outputs: { upper: { ref: 'StringTransform:Up@result' } } }, ['Message:Out']],
      ['IterationItem:Item', 'IterationItem', {}, ['StringTransform:Up']],
      ['StringTransform:Up', 'StringTransform', { method: 'merge', script: 'item {IterationItem:Item@item}' }, []],
      ['Message:Out', 'Message', { content: ['{Iteration:Each@upper}'] }, []],
    ]) as any;
    dsl.components['IterationItem:Item'].parent_id = 'Iteration:Each';
    dsl.components['StringTransform:Up'].parent_id = 'Iteration:Each';
    const agentId = await createAgent(api, dsl);
    const items = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
    const ok = await api.post('/agents/chat/completions', { agent_id: agentId, stream: false, inputs: { items: { value: items(200) } } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 500));
    const upper = JSON.parse(ok.body.data.data.content);
    assert.equal(upper.length, 200);
    assert.equal(upper[199], 'item 199');
    const over = await api.post('/agents/chat/completions', { agent_id: agentId, stream: false, inputs: { items: { value: items(201) } } });
    assert.equal(over.status, 400, JSON.stringify(over.body).slice(0, 500));
    assert.match(over.body.message, /Iteration 'Iteration:Each' has 201 items, which exceeds the limit of 200 items \(setting CAIRN_AGENT_ITERATION_MAX_ITEMS\)/);
    assert.equal(over.body.data.component_id, 'Iteration:Each');
  });
});
