import { existsSync } from 'node:fs';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
import { retrieve } from '../../src/retrieval/retrieve.js';
import { prng, randomUnitVector, syntheticChunk, textSource } from './synthetic.js';
const N = Number(process.argv[2] ?? 10000);
const file = `/tmp/scr/prof-${N}.db`;
const fresh = !existsSync(file);
const db = openIndexDatabase(file);
const index = new SqliteChunkIndex(db);
const random = prng(42);
const source = textSource(random);
if (fresh) { for (let s = 0; s < N; s += 1000) await index.upsert(Array.from({ length: 1000 }, (_, k) => syntheticChunk(s + k, source, random, 'bench'))); db.pragma('wal_checkpoint(TRUNCATE)'); }
const qr = prng(7);
const qs = Array.from({ length: 80 }, (_, i) => ({ q: source.questions[(i * 37) % source.questions.length]!, v: randomUnitVector(qr, 384) }));
const f = { datasetIds: ['bench'], availableOnly: true };
const t: Record<string, number[]> = {};
const time = async <T>(name: string, fn: () => Promise<T> | T) => { const s = performance.now(); const r = await fn(); (t[name] ??= []).push(performance.now() - s); return r; };
for (const { q, v } of qs) {
  const text = await time('fullText', () => index.fullText(q, f, 1024));
  const vec = await time('vectorSearch', () => index.vectorSearch(v, f, 1024));
  const vs = new Set(vec.map((h) => h.id));
  await time('cosines', () => index.cosineSimilarities(text.filter((h) => !vs.has(h.id)).map((h) => h.id), v));
  const r = await time('retrieve', () => retrieve({ question: q, dataset_ids: ['bench'] }, { index, embedQuery: async () => v, pagerankOf: () => 0 }));
  for (const k of ['fulltext', 'vector', 'fuse'] as const) (t['r.' + k] ??= []).push(r.timings[k]);
}
const cpu = process.cpuUsage();
for (const [k, v] of Object.entries(t)) { const s = v.slice(10).sort((a, b) => a - b); console.log(k.padEnd(14), 'p50', s[Math.floor(s.length / 2)]!.toFixed(1), 'p95', s[Math.floor(s.length * 0.95)]!.toFixed(1)); }
