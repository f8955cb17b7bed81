/**
 * What the embedded index's writes of one large document cost the event loop: a document of `--chunks`
 * synthetic chunks (bench/retrieval/synthetic.ts: ~100–300 words and a 384-dim vector each) is written,
 * renamed and deleted in an index file of its own, while a 1 ms timer measures how long the event loop went
 * without a turn (what an HTTP request or a step's heartbeat waits for at worst).
 *
 *   npx tsx bench/ingest/index-writes.ts [--chunks 20000] [--rounds 1] [--sqlite-checkpoints]
 *
 * The write-ahead log is copied on a thread of its own, as the service does (src/index/wal-checkpointer.ts);
 * `--sqlite-checkpoints` leaves it to SQLite's automatic checkpoint in the commits instead.
 *
 * Prints per operation and round: the wall time, the longest the event loop was held, and how long a checkpoint
 * of the write-ahead log then takes (what the operation left for the next commit to copy into the database file).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { REMOVE_SLICE, SqliteChunkIndex, WRITE_SLICE } from '../../src/index/chunks/sqlite-index.js';
import { WalCheckpointer } from '../../src/index/wal-checkpointer.js';
import { argument } from '../common.js';
import { prng, syntheticChunk, textSource } from '../retrieval/synthetic.js';

const count = Number(argument('chunks', '20000'));
const rounds = Number(argument('rounds', '1'));

/** Runs `operation` while a 1 ms timer notes the longest gap between the event loop's turns. */
async function measured(operation: () => Promise<unknown>): Promise<{ seconds: number; heldMs: number }> {
  const start = performance.now();
  let last = start;
  let held = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const now = performance.now();
    held = Math.max(held, now - last);
    last = now;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  await operation();
  clearTimeout(timer);
  held = Math.max(held, performance.now() - last);
  return { seconds: (performance.now() - start) / 1000, heldMs: held };
}

const random = prng(7);
const source = textSource(random);
// One document: the synthetic corpus puts 50 chunks in each, so they are given one document id here.
const chunks = Array.from({ length: count }, (_, i) => ({ ...syntheticChunk(i, source, random, 'bench'), document_id: 'large', document_name: 'large.pdf' }));
console.log(`index writes of one document of ${count} chunks, ${WRITE_SLICE} a write transaction and ${REMOVE_SLICE} a delete; the log copied ${process.argv.includes('--sqlite-checkpoints') ? 'in the commits (SQLite)' : 'on its own thread'}; load average ${loadavg()[0]!.toFixed(1)}`);
for (let round = 1; round <= rounds; round++) {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-index-writes-'));
  const db = openIndexDatabase(join(dir, 'cairn.db'));
  const checkpointer = process.argv.includes('--sqlite-checkpoints') ? undefined : new WalCheckpointer(db);
  const index = new SqliteChunkIndex(db);
  try {
    for (const [label, operation] of [
      ['upsert', () => index.upsert(chunks)],
      ['renameDocument', () => index.renameDocument('large', 'renamed.pdf')],
      ['deleteByDocument', () => index.deleteByDocument('large')],
    ] as const) {
      const { seconds, heldMs } = await measured(operation);
      const t = performance.now();
      db.pragma('wal_checkpoint(PASSIVE)');
      console.log(`round ${round}, ${label}: ${seconds.toFixed(2)} s, the event loop held at most ${heldMs.toFixed(0)} ms; checkpoint after ${(performance.now() - t).toFixed(0)} ms`);
    }
  } finally {
    await checkpointer?.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
