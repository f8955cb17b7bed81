/**
 * Retrieval quality on a BEIR data set (default: SciFact's 300 test queries): nDCG@10 (graded, as BEIR
 * computes it) and recall@100 for BM25 only (the index's full text), term similarity only, vector only
 * (the built-in embedding model) and hybrid retrieval (retrieve()) at vector weights 0.2 … 0.7, with a
 * check that every hybrid beats the better single leg. Prints numbers.
 *
 *   npx tsx bench/quality/run.ts [--beir DIR] [--profile embedded|scale-out]
 *
 * --beir takes any BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/test.tsv with graded scores).
 * --profile scale-out runs the same queries against the scale-out profile's index (Milvus).
 * Runs BM25 only when src/models has no usable built-in embedding model. Embeddings are cached in the
 * temp directory, so reruns skip the slow part.
 */
import { parseArgs } from 'node:util';
import type { ChunkFilter, IndexedChunk } from '../../src/index/types.js';
import { retrieve } from '../../src/retrieval/retrieve.js';
import { loadBeir, SCIFACT_DIR } from './beir.js';
import { builtinEmbedder, embedAll } from './embedder.js';
import { openBenchIndex, parseProfile } from '../profile.js';
import { mean, ndcgAt, recallAt } from './metrics.js';

const { values: flags } = parseArgs({
  options: { beir: { type: 'string', default: SCIFACT_DIR }, profile: { type: 'string', default: 'embedded' } },
});
const profile = parseProfile(flags.profile);

const DATASET = 'beir';
const FILTER: ChunkFilter = { datasetIds: [DATASET], availableOnly: true };
const WEIGHTS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7];

const data = loadBeir(flags.beir);
console.log(`${flags.beir}: ${data.corpus.length} documents, ${data.queries.length} test queries; profile ${profile}`);

const embedder = await builtinEmbedder();
const docVectors = embedder
  ? await embedAll(embedder, data.corpus.map((d) => `${d.title}\n${d.text}`), 'documents')
  : undefined;
const queryVectors = embedder ? await embedAll(embedder, data.queries.map((q) => q.text), 'queries') : undefined;
await embedder?.close();

const { index, loaded, close } = await openBenchIndex(profile);
const chunks: IndexedChunk[] = data.corpus.map((d, i) => ({
  id: d.id,
  tenant_id: 'bench',
  dataset_id: DATASET,
  document_id: d.id,
  document_name: d.title,
  content: d.text,
  important_keywords: [],
  questions: [],
  tag_kwd: [],
  image_id: '',
  positions: [],
  available: true,
  create_time: '2025-01-01 00:00:00',
  create_timestamp: 1735689600,
  vector: docVectors?.[i] ?? [],
}));
const loadStart = performance.now();
for (let i = 0; i < chunks.length; i += 1000) await index.upsert(chunks.slice(i, i + 1000));
await loaded([DATASET]);
console.log(`  indexed in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);

async function evaluate(name: string, rank: (query: string, i: number) => Promise<string[]>): Promise<number> {
  const ndcg: number[] = [];
  const recall: number[] = [];
  const started = performance.now();
  for (const [i, q] of data.queries.entries()) {
    const ranked = await rank(q.text, i);
    const grades = data.qrels.get(q.id)!;
    ndcg.push(ndcgAt(10, ranked, grades));
    recall.push(recallAt(100, ranked, grades));
  }
  const ms = (performance.now() - started) / data.queries.length;
  console.log(`  ${name.padEnd(48)} nDCG@10 ${mean(ndcg).toFixed(3)}   recall@100 ${mean(recall).toFixed(3)}   ${ms.toFixed(1)} ms/query`);
  return mean(ndcg);
}

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
const retrieved = (q: string, weight: number, vector: number[]) => retrieve(
  { question: q, dataset_ids: [DATASET], page_size: 100, similarity_threshold: 0, vector_similarity_weight: weight },
  { index, embedQuery: async () => vector, pagerankOf: () => 0 },
).then((r) => ids(r.chunks));

console.log('\nresults (SciFact references: BM25 0.679, bge-small-en-v1.5 0.713; all-MiniLM-L6-v2 0.645 per MTEB):');
const bm25 = await evaluate('BM25 (the index\'s full text)', async (q) => ids(await index.fullText(q, FILTER, 100)));
await evaluate('term similarity only (weight 0)', (q) => retrieved(q, 0, []));

if (queryVectors && embedder) {
  console.log(`  (embedding model: ${embedder.id})`);
  const vectorOnly = await evaluate('vector only', async (_q, i) => ids(await index.vectorSearch(queryVectors[i]!, FILTER, 100)));
  const floor = Math.max(bm25, vectorOnly);
  const losers: number[] = [];
  for (const weight of WEIGHTS) {
    const label = `hybrid retrieve(), vector weight ${weight}${weight === 0.3 ? ' (default)' : ''}`;
    if (await evaluate(label, (q, i) => retrieved(q, weight, queryVectors[i]!)) <= floor) losers.push(weight);
  }
  console.log(losers.length === 0
    ? `  every hybrid weight ${WEIGHTS[0]}–${WEIGHTS.at(-1)} beats the better single leg (${floor.toFixed(3)})`
    : `  hybrid does NOT beat the better single leg (${floor.toFixed(3)}) at weights ${losers.join(', ')}`);
} else {
  console.log('  (vector and hybrid runs skipped: no built-in embedding model)');
}

await close();
