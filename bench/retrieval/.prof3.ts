import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
import { buildMatchExpression, FTS_WEIGHTS } from '../../src/index/fts-query.js';
import { queryTerms } from '../../src/retrieval/tokenizer.js';
import { prng, textSource } from './synthetic.js';
const N = Number(process.argv[2] ?? 100000);
const db = openIndexDatabase(`/tmp/scr/prof-${N}.db`);
const index = new SqliteChunkIndex(db);
const source = textSource(prng(42));
const qs = Array.from({ length: 50 }, (_, i) => source.questions[(i * 37) % source.questions.length]!);
const t: Record<string, number[]> = {};
const time = (name: string, fn: () => unknown) => { const s = performance.now(); const r = fn(); (t[name] ??= []).push(performance.now() - s); return r; };
const cnt = db.prepare('select count(*) n from chunk_fts where chunk_fts match ?');
const tf = db.prepare('select term, doc from chunk_fts_terms where term in (select value from json_each(?))');
const onlyFts = db.prepare(`select rowid, bm25(chunk_fts, ${FTS_WEIGHTS.join(',')}) r from chunk_fts where chunk_fts match ? order by r limit 1024`);
const withKeys = db.prepare(`select chunk_fts.rowid, bm25(chunk_fts, ${FTS_WEIGHTS.join(',')}) r from chunk_fts join chunk_keys k on k.dataset_id in ('bench') and k.row = chunk_fts.rowid where chunk_fts match ? and k.available = 1 order by r limit 1024`);
const noBm25 = db.prepare(`select rowid from chunk_fts where chunk_fts match ? limit 1000000`);
for (const budget of [10000, 5000, 2500]) {
  for (const q of qs) {
    const terms = queryTerms(q);
    const df = new Map((tf.all(JSON.stringify(terms.map((x) => x.stem))) as any[]).map((r) => [r.term, r.doc]));
    const m = buildMatchExpression(terms.map((x) => ({ word: x.word, chunkFrequency: df.get(x.stem) ?? 0 })), budget)!;
    (t[`${budget} matched`] ??= []).push((cnt.get(m) as any).n);
    time(`${budget} rowids only`, () => noBm25.raw().all(m));
    time(`${budget} fts bm25 top`, () => onlyFts.all(m));
    time(`${budget} fts+keys`, () => withKeys.all(m));
  }
}
for (const [k, v] of Object.entries(t)) { const s = v.slice(5).sort((a, b) => a - b); console.log(k.padEnd(24), 'p50', s[Math.floor(s.length / 2)]!.toFixed(1), 'p95', s[Math.floor(s.length * 0.95)]!.toFixed(1)); }
