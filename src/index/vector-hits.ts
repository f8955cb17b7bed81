/**
 * Search hits and cosines by id from the in-memory vector copies (vector-copies.ts), without SQL: a copy
 * is exact for the snapshot its generation was checked in, so the rows' ids, documents and availability
 * it holds are those of the tables, and the hits are the ones the SQL path (cosinesOfRows + scopedHits in
 * sqlite-index.ts) gives, in the same order, with the same scores.
 */
import type { HitRow } from './sqlite-statements.js';
import type { ChunkFilter } from './types.js';
import { cosinesAt, idAt, positionOf, positionOfId, type ExactDatasetVectors, type Query, type VectorGroup } from './vector-copies.js';

/**
 * The best `limit` of `rows` (candidates from the datasets of `copies`) by cosine with the query that pass
 * the filter's availability and documents, as hits. Equal cosines keep the order of `rows`.
 */
export function hitsOfRows(copies: ExactDatasetVectors[], rows: number[], query: Query, filter: ChunkFilter, limit: number): HitRow[] {
  const dim = query.values.length;
  const cosines = new Float64Array(rows.length).fill(NaN);
  const where = new Int32Array(rows.length).fill(-1);
  const positionAt = new Int32Array(rows.length);
  const located: { copy: ExactDatasetVectors; group: VectorGroup }[] = [];
  for (const copy of copies) {
    for (const group of copy.groups) {
      if (group.dim !== dim) continue;
      const place = located.push({ copy, group }) - 1;
      const found: number[] = [];
      const positions: number[] = [];
      rows.forEach((row, k) => {
        if (where[k]! >= 0) return;
        const position = positionOf(group.rows, row);
        if (position < 0) return;
        found.push(k);
        positions.push(position);
      });
      const values = new Float64Array(found.length);
      cosinesAt(group, positions, query, values);
      found.forEach((k, i) => {
        cosines[k] = values[i]!;
        where[k] = place;
        positionAt[k] = positions[i]!;
      });
    }
  }
  // Rows without a cosine (no vector of this dimension, or a zero one) are not hits, as in SQL.
  const order = Array.from(rows.keys()).filter((k) => !Number.isNaN(cosines[k]));
  order.sort((a, b) => cosines[b]! - cosines[a]!);
  const documents = filter.documentIds ? new Set(filter.documentIds) : undefined;
  const hits: HitRow[] = [];
  for (const k of order) {
    if (hits.length === limit) break;
    const { copy, group } = located[where[k]!]!;
    const position = positionAt[k]!;
    if (filter.availableOnly && group.available[position] !== 1) continue;
    const [documentId, documentName] = copy.documents[group.documentOf[position]!]!;
    if (documents && !documents.has(documentId)) continue;
    hits.push([idAt(group, position), cosines[k]!, copy.datasetId, documentId, documentName]);
  }
  return hits;
}

/** Cosines of the chunks found in the groups by id; `missing` are the ids not found there. */
export function cosinesOfIds(groups: VectorGroup[], chunkIds: string[], query: Query): { cosines: Map<string, number>; missing: string[] } {
  const cosines = new Map<string, number>();
  let missing = chunkIds;
  for (const group of groups) {
    const found: string[] = [];
    const positions: number[] = [];
    const notHere: string[] = [];
    for (const id of missing) {
      const position = positionOfId(group, id);
      if (position < 0) notHere.push(id);
      else {
        found.push(id);
        positions.push(position);
      }
    }
    const values = new Float64Array(found.length);
    cosinesAt(group, positions, query, values);
    found.forEach((id, i) => {
      // A zero vector has no cosine (SQLite gives NULL): the id is found, and left out.
      if (!Number.isNaN(values[i])) cosines.set(id, values[i]!);
    });
    missing = notHere;
  }
  return { cosines, missing };
}
