import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AdmissionGate, admissionGates, withAdmission } from '../../../src/api/admission.js';
import { route, type RouteSpec } from '../../../src/api/routes.js';
import { loadConfig } from '../../../src/config.js';
import { availableParallelism } from 'node:os';

const gate = (maxInFlight: number, maxQueue: number, { maxWaitMs = 0, now }: { maxWaitMs?: number; now?: () => number } = {}) =>
  new AdmissionGate({ maxInFlight, maxQueue, maxWaitMs }, 'test', 'TEST_LIMITS', now);

/** Settles the microtasks queued so far (gate entries resolve asynchronously). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('admission gate', () => {
  it('admits up to maxInFlight at once, queues up to maxQueue, and refuses the rest at once', async () => {
    const g = gate(2, 1);
    const first = await g.enter();
    const second = await g.enter();
    assert.ok(first.admitted && second.admitted);
    let thirdEntered = false;
    const third = g.enter().then((e) => ((thirdEntered = true), e));
    const fourth = await g.enter();
    assert.equal(fourth.admitted, false);
    assert.ok(!fourth.admitted && fourth.retryAfterSeconds >= 1);
    await settle();
    assert.equal(thirdEntered, false, 'the third waits');
    assert.deepEqual(g.state(), { in_flight: 2, queued: 1, max_in_flight: 2, max_queue: 1, admitted: 2, rejected: 1 });
    first.release();
    assert.ok((await third).admitted);
    assert.deepEqual({ ...g.state(), admitted: 0 }, { in_flight: 2, queued: 0, max_in_flight: 2, max_queue: 1, admitted: 0, rejected: 1 });
  });

  it('hands a freed place to the first waiter, so a newcomer never overtakes the queue', async () => {
    const g = gate(1, 3);
    const running = await g.enter();
    const order: string[] = [];
    const waiters = ['a', 'b', 'c'].map((name) => g.enter().then((e) => (order.push(name), e)));
    await settle();
    assert.ok(running.admitted);
    running.release();
    const a = await waiters[0]!;
    const late = g.enter().then((e) => (order.push('late'), e));
    assert.ok(a.admitted);
    a.release();
    const b = await waiters[1]!;
    assert.ok(b.admitted);
    b.release();
    const c = await waiters[2]!;
    assert.ok(c.admitted);
    c.release();
    assert.ok((await late).admitted);
    assert.deepEqual(order, ['a', 'b', 'c', 'late']);
    assert.equal(g.state().in_flight, 1, 'only the latecomer holds a place');
  });

  it('releasing twice frees one place only', async () => {
    const g = gate(1, 0);
    const entry = await g.enter();
    assert.ok(entry.admitted);
    entry.release();
    entry.release();
    assert.equal(g.state().in_flight, 0);
    assert.ok((await g.enter()).admitted);
    assert.equal((await g.enter()).admitted, false);
  });

  it('a waiter whose client left gives up its place in the queue', async () => {
    const g = gate(1, 1);
    const running = await g.enter();
    const gone = new AbortController();
    const waiting = g.enter(gone.signal);
    gone.abort();
    assert.equal((await waiting).admitted, false);
    assert.equal(g.state().queued, 0);
    const next = g.enter();
    assert.ok(running.admitted);
    running.release();
    assert.ok((await next).admitted);
  });

  it('estimates Retry-After from how long requests hold their place and how many wait', async () => {
    let clock = 0;
    const g = gate(2, 4, { now: () => clock });
    const held = [await g.enter(), await g.enter()];
    clock = 3000; // each held for 3 s
    for (const e of held) if (e.admitted) e.release();
    const busy = [await g.enter(), await g.enter()];
    const queued = [g.enter(), g.enter(), g.enter(), g.enter()];
    const refused = await g.enter();
    // 5 ahead including the newcomer, 2 places, 3 s each: about 7.5 s.
    assert.ok(!refused.admitted && refused.retryAfterSeconds === 8, JSON.stringify(refused));
    for (const e of busy) if (e.admitted) e.release();
    for (const q of queued) {
      const e = await q;
      if (e.admitted) e.release();
    }
  });

  it('refuses a waiter no place freed for within maxWaitMs, saying so', async () => {
    const g = gate(1, 2, { maxWaitMs: 100 });
    const running = await g.enter();
    const started = performance.now();
    const waited = await g.enter();
    assert.ok(performance.now() - started >= 90);
    assert.ok(!waited.admitted && /^Service busy: no place freed within 100 ms; 1 test requests are running and 0 waiting/.test(waited.message), JSON.stringify(waited));
    assert.deepEqual([g.state().queued, g.state().rejected], [0, 1]);
    assert.ok(running.admitted);
    running.release();
    assert.equal(g.state().in_flight, 0);
  });

  it('builds a short and a long lane whose busy messages name their settings', async () => {
    const gates = admissionGates({ short: { maxInFlight: 1, maxQueue: 0, maxWaitMs: 0 }, long: { maxInFlight: 1, maxQueue: 0, maxWaitMs: 0 } });
    for (const [lane, pattern] of [
      ['short', /^Service busy: the queue is full; 1 retrieval and search requests are running and 0 waiting, the most this server takes \(CAIRN_MAX_INFLIGHT, CAIRN_MAX_QUEUE, CAIRN_MAX_QUEUE_WAIT_MS\); retry in 1 s$/],
      ['long', /^Service busy: the queue is full; 1 completion and upload requests .*\(CAIRN_MAX_LONG_INFLIGHT, CAIRN_MAX_LONG_QUEUE, CAIRN_MAX_LONG_QUEUE_WAIT_MS\)/],
    ] as const) {
      assert.ok((await gates[lane].enter()).admitted);
      const refused = await gates[lane].enter();
      assert.ok(!refused.admitted && pattern.test(refused.message), refused.admitted ? lane : refused.message);
    }
  });
});

describe('admission middleware over HTTP', () => {
  let server: http.Server;
  let base: string;
  const held: (() => void)[] = [];
  const gates = admissionGates({ short: { maxInFlight: 1, maxQueue: 1, maxWaitMs: 0 }, long: { maxInFlight: 1, maxQueue: 1, maxWaitMs: 0 } });

  before(async () => {
    const routes: RouteSpec[] = [
      route({ method: 'post', path: '/heavy', tag: 't', summary: 'heavy', admission: 'short', handler: () => undefined }),
      route({ method: 'get', path: '/light', tag: 't', summary: 'light', handler: () => undefined }),
    ];
    const app = express();
    for (const spec of withAdmission(routes, gates)) {
      app[spec.method](spec.path, ...(spec.middleware ?? []), (_req, res) => {
        if (spec.path === '/light') return void res.json({ code: 0, data: 'light' });
        held.push(() => res.json({ code: 0, data: 'heavy' }));
      });
    }
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(condition(), 'condition reached');
  };

  it('runs one, queues one, refuses the third with 503, Retry-After and the envelope; light routes pass', async () => {
    const first = fetch(`${base}/heavy`, { method: 'POST' });
    await until(() => held.length === 1);
    const second = fetch(`${base}/heavy`, { method: 'POST' });
    await until(() => gates.short.state().queued === 1);
    const third = await fetch(`${base}/heavy`, { method: 'POST' });
    assert.equal(third.status, 503);
    assert.equal(third.headers.get('retry-after'), '1');
    const body = (await third.json()) as { code: number; message: string };
    assert.equal(body.code, 503);
    assert.match(body.message, /^Service busy: the queue is full; 1 retrieval and search requests are running and 1 waiting/);
    assert.equal((await fetch(`${base}/light`)).status, 200, 'a light route is never refused');

    held.shift()!();
    assert.equal((await first).status, 200);
    await until(() => held.length === 1);
    held.shift()!();
    assert.equal((await second).status, 200);
    const after = fetch(`${base}/heavy`, { method: 'POST' });
    await until(() => held.length === 1);
    held.shift()!();
    assert.equal((await after).status, 200, 'a place frees when its response ends');
  });

  it('frees the place and the queue slot of clients that leave', async () => {
    const running = new AbortController();
    const waiting = new AbortController();
    const first = fetch(`${base}/heavy`, { method: 'POST', signal: running.signal }).catch(() => 'aborted');
    await until(() => held.length === 1);
    const second = fetch(`${base}/heavy`, { method: 'POST', signal: waiting.signal }).catch(() => 'aborted');
    await until(() => gates.short.state().queued === 1);
    waiting.abort();
    running.abort();
    assert.equal(await first, 'aborted');
    assert.equal(await second, 'aborted');
    held.length = 0; // the aborted request's handler never answers
    await until(() => gates.short.state().in_flight === 0 && gates.short.state().queued === 0);
    const fresh = fetch(`${base}/heavy`, { method: 'POST' });
    await until(() => held.length === 1);
    held.shift()!();
    assert.equal((await fresh).status, 200);
  });
});

describe('admission and reader-thread configuration', () => {
  it('derives the defaults from the CPU count', () => {
    const cpus = availableParallelism();
    const config = loadConfig({});
    assert.equal(config.indexThreads, Math.min(4, cpus));
    assert.deepEqual(config.admission, {
      short: { maxInFlight: 2 * cpus, maxQueue: 8 * cpus, maxWaitMs: 500 },
      long: { maxInFlight: 16 * cpus, maxQueue: 4 * cpus, maxWaitMs: 5000 },
    });
  });

  it('reads every limit from its variable, and refuses a lane without a place instead of giving it one', () => {
    const config = loadConfig({
      CAIRN_INDEX_THREADS: '0', CAIRN_MAX_INFLIGHT: '3', CAIRN_MAX_QUEUE: '0', CAIRN_MAX_QUEUE_WAIT_MS: '250',
      CAIRN_MAX_LONG_INFLIGHT: '1', CAIRN_MAX_LONG_QUEUE: '9', CAIRN_MAX_LONG_QUEUE_WAIT_MS: '0',
    });
    assert.equal(config.indexThreads, 0);
    assert.deepEqual(config.admission, {
      short: { maxInFlight: 3, maxQueue: 0, maxWaitMs: 250 },
      long: { maxInFlight: 1, maxQueue: 9, maxWaitMs: 0 },
    });
    assert.throws(() => loadConfig({ CAIRN_MAX_LONG_INFLIGHT: '0' }), /CAIRN_MAX_LONG_INFLIGHT="0": expected an integer at least 1/);
  });
});
