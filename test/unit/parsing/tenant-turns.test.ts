import assert from 'node:assert/strict';
import { TenantTurns, type ReleaseTurn } from '../../../src/parsing/tenant-turns.js';

describe('tenant turns (round-robin admission to the parsers)', () => {
  it('gives a waiting tenant the next turn, ahead of the files another tenant queued earlier', async () => {
    const turns = new TenantTurns(1);
    const order: string[] = [];
    const releases: ReleaseTurn[] = [];
    const take = (tenant: string, file: string) =>
      void turns.acquire(tenant).then((release) => {
        order.push(file);
        releases.push(release);
      });
    take('a', 'a1');
    await new Promise((r) => setImmediate(r));
    for (const file of ['a2', 'a3', 'a4']) take('a', file);
    for (const file of ['b1', 'b2']) take('b', file);
    // Each file ends in turn; the next turn is granted synchronously on release, its promise settles after.
    while (releases.length > 0) {
      releases.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(order, ['a1', 'b1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('holds at most `capacity` turns at once, and a release given twice frees one turn', async () => {
    const turns = new TenantTurns(2);
    const a = await turns.acquire('a');
    await turns.acquire('b');
    let third = false;
    const pending = turns.acquire('c').then((r) => ((third = true), r));
    await new Promise((r) => setImmediate(r));
    assert.equal(third, false);
    a();
    a();
    await pending;
    let fourth = false;
    void turns.acquire('d').then(() => (fourth = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(fourth, false, 'the second release of the same turn freed nothing');
  });

  it('a cancelled wait leaves the queue and rejects with the reason', async () => {
    const turns = new TenantTurns(1);
    const held = await turns.acquire('a');
    const controller = new AbortController();
    const waiting = turns.acquire('b', controller.signal);
    assert.equal(turns.waitingOf('b'), 1);
    controller.abort(new Error('stopped'));
    await assert.rejects(waiting, /stopped/);
    assert.equal(turns.waitingOf('b'), 0);
    held();
  });
});
