/**
 * Search hits packed for the trip from an index reader thread to the caller: a thousand Candidate objects
 * would be cloned field by field; packed, the scores travel as a transferred buffer, and a document's ids
 * and name once per document instead of once per chunk.
 */
import type { HitRow } from './sqlite-statements.js';
import type { Candidate } from './types.js';

export interface PackedHits {
  ids: string[];
  scores: Float64Array;
  /** Per hit, its document's place in `documents`. */
  documentOf: Uint32Array;
  /** [dataset_id, document_id, document_name] per distinct document. */
  documents: [string, string, string][];
}

export function packHits(rows: HitRow[]): PackedHits {
  const ids: string[] = new Array(rows.length);
  const scores = new Float64Array(rows.length);
  const documentOf = new Uint32Array(rows.length);
  const documents: [string, string, string][] = [];
  // By document id: the places in `documents` of the (dataset, name) pairs seen with it, usually one.
  const placesOf = new Map<string, number[]>();
  for (let i = 0; i < rows.length; i++) {
    const [id, score, datasetId, documentId, documentName] = rows[i]!;
    ids[i] = id;
    scores[i] = score;
    let places = placesOf.get(documentId);
    if (!places) placesOf.set(documentId, (places = []));
    let d = places.find((p) => documents[p]![0] === datasetId && documents[p]![2] === documentName);
    if (d === undefined) {
      d = documents.push([datasetId, documentId, documentName]) - 1;
      places.push(d);
    }
    documentOf[i] = d;
  }
  return { ids, scores, documentOf, documents };
}

/** The buffers postMessage can move instead of copying. */
export function transferablesOf(packed: PackedHits): ArrayBuffer[] {
  return [packed.scores.buffer, packed.documentOf.buffer] as ArrayBuffer[];
}

export function unpackHits(packed: PackedHits): Candidate[] {
  return packed.ids.map((id, i) => {
    const [dataset_id, document_id, document_name] = packed.documents[packed.documentOf[i]!]!;
    return { id, score: packed.scores[i]!, dataset_id, document_id, document_name };
  });
}

/**
 * Cosines by id packed for the same trip: in the order of the ids asked for, NaN for a chunk without one.
 * The caller holds the ids already, so only the numbers travel (a transferred buffer, not a cloned Map).
 */
export function cosinesInOrder(ids: string[], cosines: Map<string, number>): Float64Array {
  return Float64Array.from(ids, (id) => cosines.get(id) ?? NaN);
}

export function cosinesById(ids: string[], packed: Float64Array): Map<string, number> {
  const cosines = new Map<string, number>();
  ids.forEach((id, i) => {
    if (!Number.isNaN(packed[i]!)) cosines.set(id, packed[i]!);
  });
  return cosines;
}
