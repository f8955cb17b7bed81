import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { FTS_WEIGHTS } from '../../src/index/fts-query.js';
import { queryTerms } from '../../src/retrieval/tokenizer.js';
import { prng, textSource } from './synthetic.js';
const db = openIndexDatabase(`/tmp/scr/prof-100000.db`);
const source = textSource(prng(42));
const qs = Array.from({ length: 60 }, (_, i) => source.questions[(i * 37) % source.questions.length]!);
const N = (db.prepare('select count(*) n from chunk_rows').get() as any).n;
const tf = db.prepare('select term, doc from chunk_fts_terms where term in (select value from json_each(?))');
const top = db.prepare(`select rowid, bm25(chunk_fts, ${FTS_WEIGHTS.join(',')}) r from chunk_fts where chunk_fts match ? order by r limit 1024`);
const BODY = '{title content important_keywords questions}';
const any = (ws: any[]) => `${BODY}: (${ws.map((w) => `"${w.word}"`).join(' OR ')})`;
type W = { word: string; df: number };
function expr(words: W[], budget: number, optBudget: number, dropHalf: boolean): string {
  let ws = [...words].sort((a, b) => a.df - b.df);
  if (dropHalf) { const k = ws.filter((w) => w.df < N / 2); if (k.length) ws = k; }
  const req: W[] = []; let rows = 0;
  for (const w of ws) { if (req.length && rows + w.df > budget) break; req.push(w); rows += w.df; }
  const opt: W[] = []; let o = 0;
  for (const w of ws.slice(req.length)) { if (o + w.df > optBudget) break; opt.push(w); o += w.df; }
  return opt.length ? `${any(req)} AND (${any(opt)} OR scope: all)` : any(req);
}
const t: Record<string, number[]> = {};
for (const q of qs) {
  const terms = queryTerms(q);
  const df = new Map((tf.all(JSON.stringify(terms.map((x) => x.stem))) as any[]).map((r) => [r.term, r.doc]));
  const words = terms.map((x) => ({ word: x.word, df: df.get(x.stem) ?? 0 }));
  const truth = (top.all(any(words)) as any[]).map((r) => r.rowid);
  const variants: Record<string, string> = {
    'D (now)': expr(words, 10000, Infinity, false),
    'D drop>=N/2': expr(words, 10000, Infinity, true),
    'D drop, opt<=30k': expr(words, 10000, 30000, true),
    'D drop, opt<=15k': expr(words, 10000, 15000, true),
    'B (no optional)': expr(words, 10000, 0, false),
  };
  for (const [name, m] of Object.entries(variants)) {
    const s = performance.now(); const got = (top.all(m) as any[]).map((r) => r.rowid); (t[name + ' ms'] ??= []).push(performance.now() - s);
    const g10 = new Set(got.slice(0, 10)); (t[name + ' top10'] ??= []).push(truth.slice(0, 10).filter((x) => g10.has(x)).length / 10);
    const g = new Set(got); (t[name + ' top1024'] ??= []).push(truth.filter((x) => g.has(x)).length / truth.length);
  }
}
for (const [k, v] of Object.entries(t)) { const s = v.slice(5).sort((a, b) => a - b); const avg = v.reduce((a, b) => a + b, 0) / v.length; console.log(k.padEnd(28), 'p50', s[Math.floor(s.length / 2)]!.toFixed(2), 'avg', avg.toFixed(3)); }
