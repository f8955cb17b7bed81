import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import type { ModelCatalog } from './model-catalog.js';
import type { ChunkIndex, IndexedChunk } from '../index/chunks/chunk-index.js';
import type { DocumentRow } from '../store/documents.js';
import type { EmbeddingModel } from '../models/types.js';
import { cosine } from '../models/vector.js';
import { embeddingText, withTitle } from './chunk-vectors.js';
import { badRequest } from '../errors.js';

/** RAGFlow's threshold: below this average cosine, the new model's vectors do not live in the old space. */
export const COMPATIBLE_AVG_COSINE = 0.9;
/** Chunks sampled when the request names no check_num (RAGFlow's default). */
export const DEFAULT_CHECK_NUM = 5;
/** Only the first chunks of a dataset are drawn from, as RAGFlow samples the first 1,000. */
const SAMPLE_POOL = 1000;

export interface EmbeddingCheckPorts {
  datasets: Pick<DatasetService, 'get'>;
  documents: { listByDataset(datasetId: string): Promise<DocumentRow[]> };
  index: Pick<ChunkIndex, 'list' | 'getMany'>;
  models: Pick<ModelCatalog, 'checkEmbeddingModel'>;
  embedder(tenantId: string, modelId: string): Promise<EmbeddingModel>;
  /** A random integer in [0, n): injected so tests sample deterministically. */
  random?: (n: number) => number;
}

export interface EmbeddingCheckResult {
  chunk_id: string;
  doc_id?: string;
  doc_name?: string;
  vector_dim?: number;
  cos_sim?: number;
  /** Why a sampled chunk was not compared: `no_text` or `no_stored_vector`. */
  reason?: 'no_text' | 'no_stored_vector';
}

/**
 * RAGFlow's embedding check (`POST /datasets/{id}/embedding/check`): before switching a dataset's embedding
 * model, re-embed a few of its chunks with the candidate model and compare with the stored vectors. A chunk
 * is compared as the ingest embedded it (its questions, else its content; with and without the 0.1 title
 * mix, the better counting). Compatible when the average cosine is at least 0.9; otherwise a 400 carrying the
 * same figures, so the caller sees why.
 */
export class EmbeddingCheckService {
  constructor(private readonly ports: EmbeddingCheckPorts) {}

  async check(p: Principal, datasetId: string, input: { embd_id: string; check_num?: number }) {
    const dataset = await this.ports.datasets.get(p, datasetId);
    const modelId = await this.ports.models.checkEmbeddingModel(dataset.tenant_id, input.embd_id);
    const samples = await this.sample(datasetId, input.check_num ?? DEFAULT_CHECK_NUM);
    const model = await this.ports.embedder(dataset.tenant_id, modelId);
    const results: EmbeddingCheckResult[] = [];
    const sims: number[] = [];
    let mode: 'content_only' | 'title+content' = 'content_only';
    for (const chunk of samples) {
      const text = cleanTableTags(embeddingText(chunk));
      if (!text) results.push({ chunk_id: chunk.id, reason: 'no_text' });
      else if (!chunk.vector.length) results.push({ chunk_id: chunk.id, reason: 'no_stored_vector' });
      else {
        const [titleVector, textVector] = await model.embed([chunk.document_name || 'Title', text]);
        if (textVector!.length !== chunk.vector.length) {
          throw badRequest(`Embedding failure. The dimension (${textVector!.length}) of given embedding model is different from the original (${chunk.vector.length})`);
        }
        const contentOnly = cosine(textVector!, chunk.vector);
        const withTitleMix = cosine(withTitle([textVector!], titleVector!)[0]!, chunk.vector);
        mode = withTitleMix > contentOnly ? 'title+content' : 'content_only';
        const sim = Math.max(contentOnly, withTitleMix);
        sims.push(sim);
        results.push({ chunk_id: chunk.id, doc_id: chunk.document_id, doc_name: chunk.document_name, vector_dim: chunk.vector.length, cos_sim: round6(sim) });
      }
    }
    if (!sims.length) throw badRequest('No embedded chunks are available to compare.');
    const avg = sims.reduce((a, b) => a + b, 0) / sims.length;
    const summary = {
      kb_id: datasetId,
      model: modelId,
      sampled: samples.length,
      valid: sims.length,
      avg_cos_sim: round6(avg),
      min_cos_sim: round6(Math.min(...sims)),
      max_cos_sim: round6(Math.max(...sims)),
      match_mode: mode,
    };
    const data = { summary, results };
    if (summary.avg_cos_sim < COMPATIBLE_AVG_COSINE) {
      throw badRequest(
        `Embedding model switch failed: the average similarity between old and new vectors is below ${COMPATIBLE_AVG_COSINE}, indicating incompatible vector spaces.`,
        data,
      );
    }
    return data;
  }

  /** Up to `n` available chunks of the dataset, drawn at random from its first SAMPLE_POOL, with their vectors. */
  private async sample(datasetId: string, n: number): Promise<IndexedChunk[]> {
    const documents = (await this.ports.documents.listByDataset(datasetId)).filter((d) => d.chunk_count > 0);
    const pool: string[] = [];
    for (const doc of documents) {
      if (pool.length >= SAMPLE_POOL) break;
      const { chunks } = await this.ports.index.list(doc.id, { page: 1, pageSize: SAMPLE_POOL - pool.length });
      pool.push(...chunks.filter((c) => c.available).map((c) => c.id));
    }
    const random = this.ports.random ?? ((k: number) => Math.floor(Math.random() * k));
    for (let i = pool.length - 1; i > 0; i--) {
      const j = random(i + 1);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    return this.ports.index.getMany(pool.slice(0, n), { vectors: true });
  }
}

/** RAGFlow drops table markup before embedding a sampled chunk again. */
function cleanTableTags(text: string): string {
  return text.replace(/<\/?(table|td|caption|tr|th)( [^<>]{0,12})?>/g, ' ').trim();
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
