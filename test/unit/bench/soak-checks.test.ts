import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { compare, Ledger } from '../../../bench/soak/checks.js';

/** A real HTTP server on loopback; `handle` decides what each request gets. */
async function server(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const s = http.createServer(handle);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/`, close: () => new Promise((r) => s.close(r)) };
}

async function json(url: string) {
  const body = (await (await fetch(url)).json()) as { code: number; message?: string };
  if (body.code !== 0) throw new Error(body.message);
  return body;
}

describe('bench/soak checks (kill -9 soak)', () => {
  it('an acknowledged item listed 0 times is lost; any item listed twice is doubled, acknowledged or not', () => {
    const findings = compare('chat', 'chat session s', ['q1', 'q2', 'q3'], ['q1', 'q3', 'q3', 'q4', 'q4']);
    assert.deepEqual(findings.map((f) => `${f.problem} ${f.detail}`), [
      'lost chat session s: "q2" acknowledged, not listed',
      'doubled chat session s: "q3" listed 2 times',
      'doubled chat session s: "q4" listed 2 times',
    ]);
    assert.deepEqual(compare('memory', 'm0', ['a', 'b'], ['b', 'a']), []);
  });

  it('the ledger tells an acknowledged request from one cut by a kill, one refused at the door and an error answer', async () => {
    const ledger = new Ledger();
    const ok = await server((_req, res) => res.end('{"code":0}'));
    const cut = await server((req) => req.socket.destroy());
    const error = await server((_req, res) => res.end('{"code":102,"message":"bad input"}'));
    const closed = await server(() => undefined);
    await closed.close();
    try {
      await ledger.request('chat', () => json(ok.url), () => ledger.chat.set('s', ['q1']));
      await assert.rejects(ledger.request('chat', () => json(cut.url), () => ledger.chat.set('s', ['q1', 'q2'])));
      await assert.rejects(ledger.request('chat', () => json(error.url), () => assert.fail('an error answer is not acknowledged')));
      await assert.rejects(ledger.request('chat', () => json(closed.url), () => assert.fail('a refused connection is not acknowledged')));
    } finally {
      await Promise.all([ok.close(), cut.close(), error.close()]);
    }
    assert.equal(ledger.sent.chat, 3, 'the refused connection never reached Cairn');
    assert.equal(ledger.acknowledged.chat, 1);
    assert.equal(ledger.cut.chat, 1);
    assert.equal(ledger.down.chat, 1);
    assert.deepEqual([...ledger.refused.values()], [1]);
    assert.deepEqual(ledger.chat.get('s'), ['q1']);
  });

  it('a snapshot does not change when later requests are acknowledged (they belong to the next check)', async () => {
    const ledger = new Ledger();
    ledger.memory.set('m0', ['memory message 0']);
    const before = ledger.snapshot();
    await ledger.request('memory', async () => undefined, () => ledger.memory.get('m0')!.push('memory message 1'));
    assert.deepEqual(before.memory.get('m0'), ['memory message 0']);
    assert.deepEqual(ledger.memory.get('m0'), ['memory message 0', 'memory message 1']);
  });
});
