/**
 * Search hits and cosines by id from the in-memory vector copies (vector-copies.ts), without SQL: a copy
 * is exact for the snapshot its generation was checked in, so the rows' ids, documents and availability
 * it holds are those of the tables, and the hits are the ones the SQL path (cosinesOfRows + scopedHits in
 * sqlite-index.ts) gives, in the same order, with the same scores.
 */
import type { Candidates } from './int8-candidates.js';
import { bestRows } from './top-rows.js';
import type { HitRow } from '../chunks/sqlite-statements.js';
import type { ChunkFilter } from '../chunks/chunk-index.js';
import { cosinesAt, idAt, positionOf, positionOfId, type ExactDatasetVectors, type Query, type VectorGroup } from './vector-copies.js';

/**
 * The best `limit` of `rows` (candidates from the datasets of `copies`) by cosine with the query that pass
 * the filter's availability and documents, as hits. Equal cosines keep the order of `rows`. `known`: the
 * group and position of each row (the int8 stage's candidates), found by search in the groups when absent.
 */
export function hitsOfRows(
  copies: ExactDatasetVectors[], rows: number[], query: Query, filter: ChunkFilter, limit: number,
  known?: Pick<Candidates, 'groups' | 'positions'>,
): HitRow[] {
  const dim = query.values.length;
  const documents = filter.documentIds ? new Set(filter.documentIds) : undefined;
  // The candidates that are hits (a cosine, and passing the filter): their places k in `rows` and cosines.
  const passing = new Uint32Array(rows.length);
  const cosines = new Float64Array(rows.length);
  let n = 0;
  const where = new Int32Array(rows.length).fill(-1);
  const positionAt = new Int32Array(rows.length);
  const located: { copy: ExactDatasetVectors; group: VectorGroup }[] = [];
  for (const copy of copies) {
    for (const group of copy.groups) {
      if (group.dim !== dim) continue;
      const place = located.push({ copy, group }) - 1;
      const found: number[] = [];
      const positions: number[] = [];
      for (let k = 0; k < rows.length; k++) {
        if (where[k]! >= 0) continue;
        const position = known ? (known.groups[k] === group ? known.positions[k]! : -1) : positionOf(group.rows, rows[k]!);
        if (position < 0) continue;
        found.push(k);
        positions.push(position);
      }
      const values = new Float64Array(found.length);
      cosinesAt(group, positions, query, values);
      for (let i = 0; i < found.length; i++) {
        const k = found[i]!;
        const position = positions[i]!;
        where[k] = place;
        positionAt[k] = position;
        // Rows without a cosine (no vector of this dimension, or a zero one) are not hits, as in SQL.
        if (Number.isNaN(values[i])) continue;
        if (filter.availableOnly && group.available[position] !== 1) continue;
        if (documents && !documents.has(copy.documents[group.documentOf[position]!]![0])) continue;
        passing[n] = k;
        cosines[n++] = values[i]!;
      }
    }
  }
  // Best first; equal cosines in the order of `rows` (bestRows breaks ties by the lower k).
  const best = bestRows(passing, cosines, n, limit);
  const hits: HitRow[] = new Array(best.rows.length);
  for (let i = 0; i < best.rows.length; i++) {
    const k = best.rows[i]!;
    const { copy, group } = located[where[k]!]!;
    const position = positionAt[k]!;
    const document = copy.documents[group.documentOf[position]!]!;
    hits[i] = [idAt(group, position), best.scores[i]!, copy.datasetId, document[0], document[1]];
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
