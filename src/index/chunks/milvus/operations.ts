/** Row operations on one Milvus collection, shared by the chunk index and the memory index. */
import type { MilvusClient, RowData } from '@zilliz/milvus2-sdk-node';
import { writeBatches } from './batches.js';
import { call } from './client.js';

export type Row = Record<string, unknown>;

/** Milvus's largest topk, and largest offset + limit of a query. */
export const RESULT_WINDOW = 16_384;
/** Ids per `id in [...]` expression: bounds its length; fewer requests matter on milvus-lite, which scans. */
export const IDS_PER_REQUEST = 1024;

/** Upserts rows by primary key, in requests of bounded size. */
export async function upsertRows(client: MilvusClient, collection: string, rows: object[]): Promise<void> {
  for (const batch of writeBatches(rows)) {
    await call(`upsert into ${collection}`, () => client.upsert({ collection_name: collection, data: batch as RowData[] }));
  }
}

export async function deleteWhere(client: MilvusClient, collection: string, filter: string): Promise<void> {
  await call(`delete from ${collection}`, () => client.delete({ collection_name: collection, filter }));
}

export async function queryRows(client: MilvusClient, collection: string, filter: string, fields: string[], limit: number): Promise<Row[]> {
  if (limit <= 0) return [];
  const { data } = await call(`query ${collection}`, () => client.query({ collection_name: collection, filter, output_fields: fields, limit }));
  return data as Row[];
}

/** The `limit` nearest rows by cosine (at most RESULT_WINDOW), with `fields`, among those `filter` admits. */
export async function cosineSearch(client: MilvusClient, collection: string, vector: number[], filter: string, fields: string[], limit: number) {
  const { results } = await call('search (COSINE)', () => client.search({
    collection_name: collection,
    anns_field: 'vector',
    data: vector,
    limit: Math.min(limit, RESULT_WINDOW),
    metric_type: 'COSINE',
    filter,
    output_fields: fields,
  }));
  return results;
}

export async function countRows(client: MilvusClient, collection: string, filter: string): Promise<number> {
  const { data } = await call(`count ${collection}`, () => client.query({ collection_name: collection, filter, output_fields: ['count(*)'] }));
  return Number((data[0] as Row | undefined)?.['count(*)'] ?? 0);
}

/** A BM25 search hit's relevance: Milvus answers the BM25 score, milvus-lite its negation (a distance); BM25 is never below zero. */
export function bm25Score(raw: unknown): number {
  return Math.abs(Number(raw));
}

/** Cosine of two vectors of one length; undefined when either has no direction (all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number | undefined {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? undefined : dot / Math.sqrt(na * nb);
}
