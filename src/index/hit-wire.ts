/**
 * Search hits packed for the trip from an index reader thread to the caller: a thousand Candidate objects
 * with a term set each would be cloned field by field; packed, the numbers and term hashes travel as three
 * transferred buffers, and a document's ids and name once per document instead of once per chunk.
 */
import type { HitRow } from './sqlite-statements.js';
import { sortedHashLookup } from './term-hashes.js';
import type { Candidate } from './types.js';

export interface PackedHits {
  ids: string[];
  scores: Float64Array;
  /** Per hit, its document's place in `documents`. */
  documentOf: Uint32Array;
  /** [dataset_id, document_id, document_name] per distinct document. */
  documents: [string, string, string][];
  /** The hits' sorted term hashes (term-hashes.ts), back to back. */
  terms: Uint32Array;
  /** Per hit, where its term hashes end in `terms`. */
  termEnds: Uint32Array;
}

export function packHits(rows: HitRow[]): PackedHits {
  const ids: string[] = new Array(rows.length);
  const scores = new Float64Array(rows.length);
  const documentOf = new Uint32Array(rows.length);
  const termEnds = new Uint32Array(rows.length);
  const documents: [string, string, string][] = [];
  const documentIndex = new Map<string, number>();
  let words = 0;
  for (let i = 0; i < rows.length; i++) {
    const [id, score, datasetId, documentId, documentName, terms] = rows[i]!;
    ids[i] = id;
    scores[i] = score;
    const key = `${datasetId}\u0000${documentId}\u0000${documentName}`;
    let d = documentIndex.get(key);
    if (d === undefined) {
      d = documents.push([datasetId, documentId, documentName]) - 1;
      documentIndex.set(key, d);
    }
    documentOf[i] = d;
    words += terms.byteLength >> 2;
    termEnds[i] = words;
  }
  // One copy of every term set, into a fresh (hence 4-aligned, transferable) buffer.
  const bytes = Buffer.concat(rows.map((r) => r[5]), words * 4);
  const terms = new Uint32Array(words);
  new Uint8Array(terms.buffer).set(bytes);
  return { ids, scores, documentOf, documents, terms, termEnds };
}

/** The buffers postMessage can move instead of copying. */
export function transferablesOf(packed: PackedHits): ArrayBuffer[] {
  return [packed.scores.buffer, packed.documentOf.buffer, packed.terms.buffer, packed.termEnds.buffer] as ArrayBuffer[];
}

export function unpackHits(packed: PackedHits): Candidate[] {
  return packed.ids.map((id, i) => {
    const [dataset_id, document_id, document_name] = packed.documents[packed.documentOf[i]!]!;
    const terms = packed.terms.subarray(i === 0 ? 0 : packed.termEnds[i - 1]!, packed.termEnds[i]!);
    return { id, score: packed.scores[i]!, dataset_id, document_id, document_name, hasTerm: sortedHashLookup(terms) };
  });
}
