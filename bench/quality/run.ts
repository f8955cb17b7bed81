/**
 * Retrieval quality on a BEIR data set (default: SciFact's 300 test queries): nDCG@10 (graded, as BEIR
 * computes it) and recall@100 for BM25 only (the index's full text), term similarity only, vector only
 * and hybrid retrieval (retrieve()) at vector weights 0.2 … 0.7, for each built-in embedding model (the
 * default bge-small-en-v1.5, then all-MiniLM-L6-v2), with a check that every hybrid beats the better
 * single leg. Prints numbers, then nDCG@10 of the models side by side.
 *
 *   npx tsx bench/quality/run.ts [--beir DIR] [--profile embedded|scale-out]
 *
 * --beir takes any BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/test.tsv with graded scores).
 * --profile scale-out runs the same queries against the scale-out profile's index (Milvus).
 * Runs BM25 only when no built-in embedding model's files are installed. Embeddings are cached in the
 * temp directory, so reruns skip the slow part.
 */
import { parseArgs } from 'node:util';
import type { ChunkFilter, IndexedChunk } from '../../src/index/chunks/chunk-index.js';
import { RETRIEVAL_DEFAULTS, retrieve } from '../../src/retrieval/retrieve.js';
import { loadBeir, SCIFACT_DIR } from './beir.js';
import { builtinEmbedders, embedAll } from './embedder.js';
import { openBenchIndex, parseProfile } from '../profile.js';
import { mean, ndcgAt, recallAt } from './metrics.js';

const { values: flags } = parseArgs({
  options: { beir: { type: 'string', default: SCIFACT_DIR }, profile: { type: 'string', default: 'embedded' } },
});
const profile = parseProfile(flags.profile);

const DATASET = 'beir';
const FILTER: ChunkFilter = { datasetIds: [DATASET], availableOnly: true };
const WEIGHTS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
/** The service's default vector_similarity_weight, marked in the output. */
const DEFAULT_WEIGHT: number = RETRIEVAL_DEFAULTS.vector_similarity_weight;

const data = loadBeir(flags.beir);
console.log(`${flags.beir}: ${data.corpus.length} documents, ${data.queries.length} test queries; profile ${profile}`);

const embedders = await builtinEmbedders();
const documents = data.corpus.map((d) => `${d.title}\n${d.text}`);
const questions = data.queries.map((q) => q.text);

function chunksOf(vectors: number[][] | undefined): IndexedChunk[] {
  return data.corpus.map((d, i) => ({
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
    vector: vectors?.[i] ?? [],
  }));
}

/** A fresh index of the profile holding the corpus with these vectors (none: full text only). */
async function indexWith(vectors: number[][] | undefined): Promise<Awaited<ReturnType<typeof openBenchIndex>>> {
  const opened = await openBenchIndex(profile);
  const chunks = chunksOf(vectors);
  const loadStart = performance.now();
  for (let i = 0; i < chunks.length; i += 1000) await opened.index.upsert(chunks.slice(i, i + 1000));
  await opened.loaded([DATASET]);
  console.log(`  indexed in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);
  return opened;
}

/** nDCG@10 of each run, by run name then model id: printed side by side at the end. */
const table = new Map<string, Map<string, number>>();

async function evaluate(model: string, name: string, rank: (query: string, i: number) => Promise<string[]>): Promise<number> {
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
  if (!table.has(name)) table.set(name, new Map());
  table.get(name)!.set(model, mean(ndcg));
  return mean(ndcg);
}

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
const retrieved = (index: BenchIndexHandle['index'], q: string, weight: number, vector: number[]) => retrieve(
  { question: q, dataset_ids: [DATASET], page_size: 100, similarity_threshold: 0, vector_similarity_weight: weight },
  { index, embedQuery: async () => vector, pagerankOf: () => 0 },
).then((r) => ids(r.chunks));
type BenchIndexHandle = Awaited<ReturnType<typeof openBenchIndex>>;

console.log('\nresults (SciFact references: BM25 0.679, bge-small-en-v1.5 0.713; all-MiniLM-L6-v2 0.645 per MTEB):');
const verdicts: string[] = [];
if (embedders.length === 0) {
  const { index, close } = await indexWith(undefined);
  await evaluate('-', 'BM25 (the index\'s full text)', async (q) => ids(await index.fullText(q, FILTER, 100)));
  await evaluate('-', 'term similarity only (weight 0)', (q) => retrieved(index, q, 0, []));
  console.log('  (vector and hybrid runs skipped: no built-in embedding model)');
  await close();
}
for (const embedder of embedders) {
  console.log(`\n  embedding model ${embedder.id}:`);
  // Passages as they are, queries as queries (bge-small-en-v1.5 prefixes its search instruction).
  const docVectors = await embedAll(embedder, documents, 'documents');
  const queryVectors = await embedAll(embedder, questions, 'queries', 'query');
  const { index, close } = await indexWith(docVectors);
  const bm25 = await evaluate(embedder.id, 'BM25 (the index\'s full text)', async (q) => ids(await index.fullText(q, FILTER, 100)));
  await evaluate(embedder.id, 'term similarity only (weight 0)', (q) => retrieved(index, q, 0, []));
  const vectorOnly = await evaluate(embedder.id, 'vector only', async (_q, i) => ids(await index.vectorSearch(queryVectors[i]!, FILTER, 100)));
  const floor = Math.max(bm25, vectorOnly);
  const losers: number[] = [];
  for (const weight of WEIGHTS) {
    const label = `hybrid retrieve(), vector weight ${weight}${weight === DEFAULT_WEIGHT ? ' (default)' : ''}`;
    if (await evaluate(embedder.id, label, (q, i) => retrieved(index, q, weight, queryVectors[i]!)) <= floor) losers.push(weight);
  }
  verdicts.push(losers.length === 0
    ? `  ${embedder.id}: every hybrid weight ${WEIGHTS[0]}–${WEIGHTS.at(-1)} beats the better single leg (${floor.toFixed(3)})`
    : `  ${embedder.id}: hybrid does NOT beat the better single leg (${floor.toFixed(3)}) at weights ${losers.join(', ')}`);
  await close();
}

if (embedders.length > 0) {
  const models = embedders.map((e) => e.id);
  console.log(`\nnDCG@10 side by side (SciFact, ${data.queries.length} queries, profile ${profile}):`);
  console.log(`  ${'run'.padEnd(48)} ${models.map((m) => m.split('@')[0]!.split('/').pop()!.padStart(22)).join('')}`);
  for (const [name, byModel] of table) {
    console.log(`  ${name.padEnd(48)} ${models.map((m) => (byModel.get(m)?.toFixed(3) ?? '-').padStart(22)).join('')}`);
  }
  for (const line of verdicts) console.log(line);
}
