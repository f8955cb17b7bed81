/**
 * Retrieval quality on BEIR SciFact (300 test queries): nDCG@10 and recall@100 for BM25 only (the
 * FTS5 index), vector only (the built-in embedding model, exact and two-stage search) and hybrid
 * retrieval (retrieve() with RAGFlow's scoring at several vector weights). Prints numbers.
 *
 *   npx tsx bench/quality/run.ts
 *
 * Runs BM25 only when src/models has no usable built-in embedding model. Embeddings are cached in the
 * temp directory, so reruns skip the slow part.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
import type { ChunkFilter, IndexedChunk } from '../../src/index/types.js';
import { retrieve } from '../../src/retrieval/retrieve.js';
import { builtinEmbedder, embedAll } from './embedder.js';
import { mean, ndcgAt, recallAt } from './metrics.js';
import { loadSciFact } from './scifact.js';

const DATASET = 'scifact';
const FILTER: ChunkFilter = { datasetIds: [DATASET], availableOnly: true };

const data = loadSciFact();
console.log(`SciFact: ${data.corpus.length} documents, ${data.queries.length} test queries`);

const embedder = await builtinEmbedder();
const docVectors = embedder
  ? await embedAll(embedder, data.corpus.map((d) => `${d.title}\n${d.text}`), 'documents')
  : undefined;
const queryVectors = embedder ? await embedAll(embedder, data.queries.map((q) => q.text), 'queries') : undefined;
await embedder?.close();

const dir = mkdtempSync(join(tmpdir(), 'cairn-quality-'));
const db = openIndexDatabase(join(dir, 'cairn.db'));
const index = new SqliteChunkIndex(db);
const exactIndex = new SqliteChunkIndex(db, { vectorOversample: Infinity });
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
for (let i = 0; i < chunks.length; i += 1000) await index.upsert(chunks.slice(i, i + 1000));

async function evaluate(name: string, rank: (query: string, i: number) => Promise<string[]>): Promise<void> {
  const ndcg: number[] = [];
  const recall: number[] = [];
  const started = performance.now();
  for (const [i, q] of data.queries.entries()) {
    const ranked = await rank(q.text, i);
    const relevant = data.qrels.get(q.id)!;
    ndcg.push(ndcgAt(10, ranked, relevant));
    recall.push(recallAt(100, ranked, relevant));
  }
  const ms = (performance.now() - started) / data.queries.length;
  console.log(`  ${name.padEnd(48)} nDCG@10 ${mean(ndcg).toFixed(3)}   recall@100 ${mean(recall).toFixed(3)}   ${ms.toFixed(1)} ms/query`);
}

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
console.log('\nresults (references: BM25 0.679, bge-small-en-v1.5 0.713; all-MiniLM-L6-v2 0.645 per MTEB):');
await evaluate('BM25 (FTS5 bm25)', async (q) => ids(await index.fullText(q, FILTER, 100)));
await evaluate('term similarity only (weight 0, RAGFlow)', async (q) => ids((await retrieve(
  { question: q, dataset_ids: [DATASET], page_size: 100, similarity_threshold: 0, vector_similarity_weight: 0 },
  { index, embedQuery: async () => [], pagerankOf: () => 0 },
)).chunks));

if (queryVectors && embedder) {
  console.log(`  (embedding model: ${embedder.id})`);
  await evaluate('vector only, exact', async (_q, i) => ids(await exactIndex.vectorSearch(queryVectors[i]!, FILTER, 100)));
  await evaluate('vector only, two-stage (default)', async (_q, i) => ids(await index.vectorSearch(queryVectors[i]!, FILTER, 100)));
  for (const weight of [0.3, 0.5, 0.7, 0.9]) {
    await evaluate(`hybrid retrieve(), vector weight ${weight}${weight === 0.3 ? ' (default)' : ''}`, async (q, i) => ids((await retrieve(
      { question: q, dataset_ids: [DATASET], page_size: 100, similarity_threshold: 0, vector_similarity_weight: weight },
      { index, embedQuery: async () => queryVectors[i]!, pagerankOf: () => 0 },
    )).chunks));
  }
} else {
  console.log('  (vector and hybrid runs skipped: no built-in embedding model)');
}

db.close();
rmSync(dir, { recursive: true, force: true });
