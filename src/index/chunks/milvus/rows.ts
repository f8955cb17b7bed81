/** How a chunk is written to the Milvus collections (collections.ts), and read back. */
import type { IndexedChunk } from '../chunk-index.js';
import { bm25Text, VARCHAR_MAX_BYTES } from './analysis.js';
import { PLACEHOLDER_VECTOR } from './collections.js';
import { splitUtf8, truncateUtf8 } from './utf8.js';

export interface ChunkRow {
  id: string;
  dataset_id: string;
  document_id: string;
  document_name: string;
  available: boolean;
  /** Length of the chunk's vector; 0 = none. */
  dim: number;
  page_number: number;
  top: number;
  create_timestamp: number;
  /** When the chunk was first written (milvus-index.ts nextOrdinal): orders chunks with the same position and time. */
  ordinal: number;
  text: string;
  content_folded: string;
  /** Whether content_folded holds the whole lower-cased content (false: cut at 64 KB). */
  folded_whole: boolean;
  /** The record's JSON, or its first 64 KB when record_parts > 0. */
  record: string;
  record_parts: number;
}

/** Every field of a chunks row (the `sparse` vector is Milvus's, made from `text`). */
export const CHUNK_ROW_FIELDS: (keyof ChunkRow)[] = [
  'id', 'dataset_id', 'document_id', 'document_name', 'available', 'dim', 'page_number', 'top', 'create_timestamp', 'ordinal',
  'text', 'content_folded', 'folded_whole', 'record', 'record_parts',
];

export interface VectorRow {
  id: string;
  dataset_id: string;
  document_id: string;
  available: boolean;
  vector: number[];
}

export interface PartRow {
  id: string;
  chunk_id: string;
  dataset_id: string;
  document_id: string;
  seq: number;
  data: string;
  placeholder: number[];
}

/** What the record keeps besides the chunk's fields: the vector lives in its own collection. */
interface ChunkRecord {
  chunk: Omit<IndexedChunk, 'vector'>;
  /** A vector of only zeros: not stored in a vectors collection (it has no direction to search by). */
  zeroVector: boolean;
}

export const isZeroVector = (vector: number[]) => vector.every((x) => x === 0);

export function partId(chunkId: string, seq: number): string {
  return `${chunkId}#${seq}`;
}

/** The rows of one chunk: its chunks row, its vector row (when it has a non-zero vector) and record parts. */
export function chunkRows(chunk: IndexedChunk, ordinal: number): { row: ChunkRow; vector?: VectorRow; parts: PartRow[] } {
  const { vector, ...fields } = chunk;
  const zeroVector = vector.length > 0 && isZeroVector(vector);
  const [first = '', ...rest] = splitUtf8(JSON.stringify({ chunk: fields, zeroVector } satisfies ChunkRecord), VARCHAR_MAX_BYTES);
  const folded = chunk.content.toLowerCase();
  const contentFolded = truncateUtf8(folded, VARCHAR_MAX_BYTES);
  const position = chunk.positions[0];
  const keys = { id: chunk.id, dataset_id: chunk.dataset_id, document_id: chunk.document_id };
  return {
    row: {
      ...keys,
      document_name: chunk.document_name,
      available: chunk.available,
      dim: vector.length,
      page_number: position ? position[0] : 0,
      top: position ? position[3] : 0,
      create_timestamp: chunk.create_timestamp,
      ordinal,
      text: bm25Text(chunk),
      content_folded: contentFolded,
      folded_whole: contentFolded.length === folded.length,
      record: first,
      record_parts: rest.length,
    },
    vector: vector.length > 0 && !zeroVector ? { ...keys, available: chunk.available, vector } : undefined,
    parts: rest.map((data, i) => ({
      id: partId(chunk.id, i + 1),
      chunk_id: chunk.id,
      dataset_id: chunk.dataset_id,
      document_id: chunk.document_id,
      seq: i + 1,
      data,
      placeholder: PLACEHOLDER_VECTOR,
    })),
  };
}

/** The chunk from its record (all its parts joined, in order) and its vector; undefined vector = none stored. */
export function chunkFromRecord(recordJson: string, dim: number, vector: number[] | undefined): IndexedChunk {
  const record = JSON.parse(recordJson) as ChunkRecord;
  const restored = vector ?? (record.zeroVector ? new Array<number>(dim).fill(0) : []);
  return { ...record.chunk, vector: restored };
}
