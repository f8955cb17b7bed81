/**
 * Search hits packed for the trip from an index reader thread to the caller: a thousand Candidate objects
 * would be cloned field by field; packed, the scores travel as a transferred buffer, and a document's ids
 * and name once per document instead of once per chunk. Strings travel joined into one (packStrings):
 * postMessage clones each string of an array on its own, which for a thousand ids and their documents cost
 * more than the search on either side of the trip.
 */
import type { HitRow } from './sqlite-statements.js';
import type { Candidate } from './chunk-index.js';

/** Strings joined into one, with where each ends in it. */
export interface PackedStrings {
  text: string;
  ends: Uint32Array;
}

export function packStrings(parts: string[]): PackedStrings {
  const ends = new Uint32Array(parts.length);
  let end = 0;
  for (let i = 0; i < parts.length; i++) ends[i] = end += parts[i]!.length;
  return { text: parts.join(''), ends };
}

export function unpackStrings({ text, ends }: PackedStrings): string[] {
  const parts: string[] = new Array(ends.length);
  let start = 0;
  for (let i = 0; i < ends.length; i++) parts[i] = text.slice(start, (start = ends[i]!));
  return parts;
}

export interface PackedHits {
  ids: PackedStrings;
  scores: Float64Array;
  /** Per hit, its document's place in `documents`. */
  documentOf: Uint32Array;
  /** dataset_id, document_id, document_name of each distinct document, one after the other. */
  documents: PackedStrings;
}

export function packHits(rows: HitRow[]): PackedHits {
  const ids: string[] = new Array(rows.length);
  const scores = new Float64Array(rows.length);
  const documentOf = new Uint32Array(rows.length);
  /** dataset_id, document_id, document_name of each distinct document, one after the other. */
  const documents: string[] = [];
  // By document id: the places of the (dataset, name) pairs seen with it, usually one.
  const placesOf = new Map<string, number[]>();
  for (let i = 0; i < rows.length; i++) {
    const [id, score, datasetId, documentId, documentName] = rows[i]!;
    ids[i] = id;
    scores[i] = score;
    let places = placesOf.get(documentId);
    if (!places) placesOf.set(documentId, (places = []));
    let d = places.find((p) => documents[3 * p] === datasetId && documents[3 * p + 2] === documentName);
    if (d === undefined) {
      d = documents.push(datasetId, documentId, documentName) / 3 - 1;
      places.push(d);
    }
    documentOf[i] = d;
  }
  return { ids: packStrings(ids), scores, documentOf, documents: packStrings(documents) };
}

/** The buffers postMessage can move instead of copying. */
export function transferablesOf(packed: PackedHits): ArrayBuffer[] {
  return [packed.scores.buffer, packed.documentOf.buffer, packed.ids.ends.buffer, packed.documents.ends.buffer] as ArrayBuffer[];
}

export function unpackHits(packed: PackedHits): Candidate[] {
  const documents = unpackStrings(packed.documents);
  return unpackStrings(packed.ids).map((id, i) => {
    const d = 3 * packed.documentOf[i]!;
    return { id, score: packed.scores[i]!, dataset_id: documents[d]!, document_id: documents[d + 1]!, document_name: documents[d + 2]! };
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
