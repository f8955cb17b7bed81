import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type MetaDb } from '../../../src/store/db.js';
import { openIndexDatabase, type Sqlite } from '../../../src/index/sqlite-database.js';
import { SqliteRunEvents } from '../../../src/events/sqlite-run-events.js';
import { PgRunEvents } from '../../../src/events/pg-run-events.js';
import { followRun, RUN_END, type RunEvent, type RunEvents } from '../../../src/events/types.js';
import { freshDatabaseUrl, testProfiles } from '../../support/meta-store.js';

/**
 * One suite, both implementations: SqliteRunEvents (embedded) and PgRunEvents (scale-out). Each
 * `open()` is a separate connection to one shared log, as a separate process would have.
 */
interface Backend {
  name: string;
  setUp(): Promise<void>;
  open(): Promise<RunEvents>;
  tearDown(): Promise<void>;
}

function sqliteBackend(): Backend {
  let dir = '';
  const conns: Sqlite[] = [];
  return {
    name: 'SqliteRunEvents',
    async setUp() {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-events-'));
    },
    async open() {
      const conn = openIndexDatabase(path.join(dir, 'cairn.db'));
      conns.push(conn);
      return new SqliteRunEvents(conn);
    },
    async tearDown() {
      conns.splice(0).forEach((c) => c.close());
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgBackend(): Backend {
  let url = '';
  const dbs: MetaDb[] = [];
  return {
    name: 'PgRunEvents',
    async setUp() {
      url = await freshDatabaseUrl('scale-out');
    },
    async open() {
      const db = await openDatabase(url);
      dbs.push(db);
      return new PgRunEvents(db.kysely);
    },
    async tearDown() {
      await Promise.all(dbs.splice(0).map((db) => db.close()));
    },
  };
}

const backends = testProfiles().map((p) => (p === 'embedded' ? sqliteBackend() : pgBackend()));
const ev = (n: number, data: unknown = n): RunEvent => ({ event: 'message', data });

for (const backend of backends) {
  describe(`RunEvents conformance: ${backend.name}`, () => {
    let bus: RunEvents;
    beforeEach(async () => {
      await backend.setUp();
      bus = await backend.open();
    });
    afterEach(() => backend.tearDown());

    it('reads a run back in publish order, after any sequence number, and nothing of other runs', async () => {
      await bus.publish('run-a', [ev(1), ev(2)]);
      await bus.publish('run-b', [ev(100)]);
      await bus.publish('run-a', [ev(3)]);
      await bus.publish('run-a', []);
      const all = await bus.read('run-a', 0);
      assert.deepEqual(all.map((l) => l.event.data), [1, 2, 3]);
      assert.ok(all.every((l, i) => typeof l.seq === 'number' && (i === 0 || l.seq > all[i - 1]!.seq)), 'numeric, increasing seq');
      assert.deepEqual((await bus.read('run-a', all[0]!.seq)).map((l) => l.event.data), [2, 3]);
      assert.deepEqual(await bus.read('run-a', all[2]!.seq), []);
      assert.deepEqual((await bus.read('run-b', 0)).map((l) => l.event.data), [100]);
    });

    it('keeps event bodies as given (text, unicode, nested data)', async () => {
      const body: RunEvent = { event: 'node_finished', data: { text: 'naïve — 東京 \\ "q" %_', nested: [1, { x: null }] }, created_at: 1700000000, stream: 's', attempt: 2 };
      await bus.publish('run', [body]);
      assert.deepEqual((await bus.read('run', 0))[0]!.event, body);
    });

    it('reads at most 500 events at a time', async () => {
      await bus.publish('big', Array.from({ length: 620 }, (_, i) => ev(i)));
      const first = await bus.read('big', 0);
      assert.equal(first.length, 500);
      const rest = await bus.read('big', first.at(-1)!.seq);
      assert.deepEqual(rest.map((l) => l.event.data), Array.from({ length: 120 }, (_, i) => i + 500));
    });

    it('wakes a waiting reader of the publishing process at once, and times out otherwise', async () => {
      let t0 = Date.now();
      await bus.wait('quiet', 60);
      assert.ok(Date.now() - t0 >= 55, 'waited out the timeout');
      t0 = Date.now();
      const waiting = bus.wait('busy', 10_000);
      setTimeout(() => void bus.publish('busy', [ev(1)]), 20);
      await waiting;
      assert.ok(Date.now() - t0 < 5_000, 'woken by the publish');
    });

    it('a reader on another connection follows a run to its end', async () => {
      const reader = await backend.open();
      const seen: unknown[] = [];
      const following = (async () => {
        for await (const e of followRun(reader, 'run-x')) seen.push(e.data);
      })();
      for (let i = 0; i < 5; i++) await bus.publish('run-x', [ev(i)]);
      await bus.publish('run-x', [{ event: RUN_END, data: {} }]);
      await following;
      assert.deepEqual(seen, [0, 1, 2, 3, 4]);
    });

    it('concurrent publishers of one run on separate connections: a following reader misses nothing', async () => {
      const [a, b, reader] = [await backend.open(), await backend.open(), await backend.open()];
      const seen: string[] = [];
      const controller = new AbortController();
      const following = (async () => {
        for await (const e of followRun(reader, 'race', controller.signal, 1)) seen.push(e.data as string);
      })();
      const publish = async (bus: RunEvents, tag: string) => {
        for (let i = 0; i < 60; i++) await bus.publish('race', [ev(0, `${tag}${i}`), ev(0, `${tag}${i}'`)]);
      };
      await Promise.all([publish(a, 'a'), publish(b, 'b'), publish(bus, 'c')]);
      await bus.publish('race', [{ event: RUN_END, data: {} }]);
      const timer = setTimeout(() => controller.abort(), 20_000);
      await following;
      clearTimeout(timer);
      assert.equal(seen.length, 360, `every event reached the reader (got ${seen.length})`);
      for (const tag of ['a', 'b', 'c']) {
        const mine = seen.filter((s) => s.startsWith(tag));
        assert.deepEqual(mine, Array.from({ length: 60 }, (_, i) => [`${tag}${i}`, `${tag}${i}'`]).flat(), `${tag}'s events in its order`);
      }
    });

    it('remove drops the named runs only', async () => {
      await bus.publish('gone', [ev(1)]);
      await bus.publish('kept', [ev(2), ev(3)]);
      await bus.remove(['gone', 'never-existed']);
      await bus.remove([]);
      assert.deepEqual(await bus.read('gone', 0), []);
      assert.equal((await bus.read('kept', 0)).length, 2);
    });

    it('purgeLogs drops whole logs: an ended one after endedMs, whatever the age of its first events; an unended one only once idle for idleMs', async () => {
      await bus.publish('ended', [ev(1), ev(2)]);
      await bus.publish('running', [ev(3)]);
      await new Promise((r) => setTimeout(r, 40));
      // The running log's first event is older than endedMs; it is still kept, with its later events.
      await bus.publish('running', [ev(4)]);
      await bus.publish('ended', [{ event: RUN_END, data: { status: 'finished' } }]);
      assert.equal(await bus.purgeLogs({ endedMs: 60_000, idleMs: 60_000 }), 0, 'nothing ended a minute ago');
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(await bus.purgeLogs({ endedMs: 10, idleMs: 60_000 }), 3, 'the ended log, all of it');
      assert.deepEqual(await bus.read('ended', 0), []);
      assert.deepEqual((await bus.read('running', 0)).map((e) => e.event.data), [3, 4], 'an unended log keeps every event');
      // A log that never ends (its workflow terminated) goes once nothing was written to it for idleMs.
      assert.equal(await bus.purgeLogs({ endedMs: 10, idleMs: 10 }), 2);
      assert.deepEqual(await bus.read('running', 0), []);
    });

    it('ended: true once the run published its end, on any connection; an end-like payload does not count', async () => {
      const other = await backend.open();
      await bus.publish('finishing', [ev(1), { event: 'message', data: { event: RUN_END } }]);
      assert.equal(await other.ended('finishing'), false);
      assert.equal(await other.ended('never-published'), false);
      await bus.publish('finishing', [{ event: RUN_END, data: { status: 'finished' } }]);
      assert.equal(await other.ended('finishing'), true);
      assert.equal(await bus.ended('finishing'), true);
    });

    it("an event's data shaped like a run's end does not end its log", async () => {
      await bus.publish('look-alike', [{ data: 'x', event: 'message' } as RunEvent, { event: 'message', data: { event: RUN_END } }]);
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(await bus.purgeLogs({ endedMs: 10, idleMs: 60_000 }), 0);
      assert.equal((await bus.read('look-alike', 0)).length, 2);
    });
  });
}
