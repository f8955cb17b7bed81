import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { newUser, type Api } from './client.js';
import { canvas, createAgent } from './agent-helpers.js';

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
    assert.equal(res.status, 500);
    assert.match(res.body.message, /CodeExec:Spin.*(time|timed out)/i);
    const ok = await createAgent(api, canvas([
      ['begin', 'Begin', {}, ['CodeExec:Add']],
      ['CodeExec:Add', 'CodeExec', { lang: 'javascript', script: 'function main() { return 1 + 1; }' }, ['Message:M']],
      ['Message:M', 'Message', { content: ['{CodeExec:Add@result}'] }, []],
    ]));
    const again = await api.post('/agents/chat/completions', { agent_id: ok, query: 'x', stream: false });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.data.data.content, '2');
  });
});
