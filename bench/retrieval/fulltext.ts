/**
 * The in-memory full-text search alone (src/index/fulltext/), bounded top-k against every posting
 * (prints numbers; not a timed test).
 *
 *   npx tsx bench/retrieval/fulltext.ts [--sizes 100000,1000000] [--queries 200] [--limits 1024,100,30]
 *
 * For each size: builds one dataset's copy (DatasetPostings) straight from the synthetic chunks of
 * bench/retrieval (synthetic.ts, without vectors), then for each limit asks run.ts's questions, each one
 * with `search` (MaxScore, max-score.ts) and with `searchEveryPosting` (the exhaustive reference)
 * alternately, checks that both give the same hits and scores, and prints the CPU time per search
 * (p50 / p95, process.cpuUsage), the postings read in full and the single-row probes. The idf is computed
 * with Math.log rather than SQLite's ln(): both paths get the same words, which is all they are compared on.
 */
import { loadavg } from 'node:os';
import { argument, percentile } from '../common.js';
import { DatasetPostings, type PostingSourceRow, type WeightedStem } from '../../src/index/fulltext/dataset-postings.js';
import { idfOf, type TableTotals } from '../../src/index/fulltext/fts5-bm25.js';
import type { SearchCounters } from '../../src/index/fulltext/max-score.js';
import type { HitRow } from '../../src/index/chunks/sqlite-statements.js';
import { queryTerms } from '../../src/retrieval/tokenizer.js';
import { prng, syntheticChunk, textSource, type TextSource } from './synthetic.js';

const sizes = argument('sizes', '100000').split(',').map(Number);
const queryCount = Number(argument('queries', '200'));
const limits = argument('limits', '1024,100,30').split(',').map(Number);

const cpuMs = (start: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
};
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

function* sourceRows(size: number, source: TextSource, random: () => number): Iterable<PostingSourceRow> {
  for (let i = 0; i < size; i++) {
    const c = syntheticChunk(i, source, random, 'bench', 0);
    yield {
      rowid: i + 1, id: c.id, document_id: c.document_id, document_name: c.document_name, available: 1, content: c.content,
      important_keywords: JSON.stringify(c.important_keywords), questions: JSON.stringify(c.questions),
    };
  }
}

function sameHits(a: HitRow[], b: HitRow[]): boolean {
  return a.length === b.length && a.every((hit, i) => hit[0] === b[i]![0] && Object.is(hit[1], b[i]![1]));
}

interface Measured {
  cpu: number[];
  postings: number;
  probes: number;
}

function measure(run: (counters: SearchCounters) => HitRow[], into: Measured): HitRow[] {
  const counters = { postings: 0, probes: 0 };
  const start = process.cpuUsage();
  const hits = run(counters);
  into.cpu.push(cpuMs(start));
  into.postings += counters.postings;
  into.probes += counters.probes;
  return hits;
}

function describe(name: string, m: Measured, queries: number): string {
  const p = (x: number) => x.toFixed(2).padStart(6);
  return `${name.padEnd(14)} CPU p50 ${p(percentile(m.cpu, 50))} ms  p95 ${p(percentile(m.cpu, 95))} ms  mean ${p(m.cpu.reduce((a, b) => a + b, 0) / queries)} ms`
    + `  postings read ${Math.round(m.postings / queries).toLocaleString('en').padStart(9)}  probes ${Math.round(m.probes / queries).toLocaleString('en').padStart(7)}`;
}

for (const size of sizes) {
  const random = prng(42);
  const source = textSource(random);
  console.log(`\n${size.toLocaleString('en')} chunks (load average ${load()})`);
  const buildStart = process.cpuUsage();
  const postings = DatasetPostings.build('bench', sourceRows(size, source, random));
  console.log(`  build ${(cpuMs(buildStart) / 1000).toFixed(1)} s CPU (with generating the text); ${postings.postingCount.toLocaleString('en')} postings, `
    + `${postings.termCount.toLocaleString('en')} terms, ${(postings.bytes / 2 ** 20).toFixed(1)} MiB`
    + ` of which the per-term bounds ${(postings.boundBytes / 2 ** 20).toFixed(2)} MiB`);
  const totals: TableTotals = { rowCount: postings.rowCount, averageLength: postings.tokenCount / postings.rowCount };
  const questions: WeightedStem[][] = Array.from({ length: queryCount }, (_, i) => {
    const question = source.questions[(i * 37) % source.questions.length]!;
    return queryTerms(question).map(({ stem }) => {
      const n = postings.rowsWith(stem);
      return { stem, idf: idfOf(Math.log((totals.rowCount - n + 0.5) / (n + 0.5))) };
    });
  });
  // Warm-up: the JIT and the scratch's length terms.
  for (const words of questions.slice(0, 20)) {
    postings.search(words, totals, {}, 1024);
    postings.searchEveryPosting(words, totals, {}, 1024);
  }
  for (const limit of limits) {
    const pruned: Measured = { cpu: [], postings: 0, probes: 0 };
    const every: Measured = { cpu: [], postings: 0, probes: 0 };
    let differing = 0;
    for (const [i, words] of questions.entries()) {
      // Alternate which goes first, so that both see the same caches and load.
      const first = i % 2 === 0;
      const a = first ? measure((c) => postings.search(words, totals, {}, limit, c), pruned) : undefined;
      const b = measure((c) => postings.searchEveryPosting(words, totals, {}, limit, c), every);
      const c = a ?? measure((k) => postings.search(words, totals, {}, limit, k), pruned);
      if (!sameHits(c, b)) differing++;
    }
    console.log(`  limit ${limit} (${queryCount} questions, load average ${load()})${differing ? `  ${differing} DIFFERING` : ', same hits and scores'}`);
    console.log(`    ${describe('MaxScore', pruned, queryCount)}`);
    console.log(`    ${describe('every posting', every, queryCount)}`);
  }
}
