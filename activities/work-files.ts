import { fromJsonWithBytes, toJsonWithBytes } from '../src/blobs/json-with-bytes.js';
import type { BlobStore } from '../src/blobs/types.js';
import { datasetBlobPrefix } from '../src/services/blob-keys.js';

/**
 * Intermediate results of a parse run live in the BlobStore, not in workflow history (which has a
 * payload size limit): each step reads its input from here and writes its output here.
 */
export function workPrefix(datasetId: string, documentId: string, runSeq: number): string {
  return `${datasetBlobPrefix(datasetId)}/work/${documentId}-${runSeq}`;
}

/** A work file of JSON, Uint8Array values (images) carried as base64 (src/blobs/json-with-bytes.ts). */
export async function writeJson(blobs: BlobStore, key: string, value: unknown): Promise<void> {
  await blobs.put(key, Buffer.from(toJsonWithBytes(value)));
}

export async function readJson<T>(blobs: BlobStore, key: string): Promise<T> {
  const bytes = await blobs.get(key);
  if (!bytes) throw new Error(`work file ${key} is missing`);
  return fromJsonWithBytes<T>(bytes.toString('utf8'));
}

export async function writeVectors(blobs: BlobStore, key: string, vectors: number[][]): Promise<void> {
  const dims = vectors[0]?.length ?? 0;
  const flat = new Float32Array(vectors.length * dims);
  vectors.forEach((v, i) => flat.set(v, i * dims));
  const header = Buffer.alloc(8);
  header.writeUInt32LE(vectors.length, 0);
  header.writeUInt32LE(dims, 4);
  await blobs.put(key, Buffer.concat([header, Buffer.from(flat.buffer)]));
}

export async function readVectors(blobs: BlobStore, key: string): Promise<number[][] | undefined> {
  const bytes = await blobs.get(key);
  if (!bytes) return undefined;
  const count = bytes.readUInt32LE(0);
  const dims = bytes.readUInt32LE(4);
  const flat = new Float32Array(bytes.buffer.slice(bytes.byteOffset + 8, bytes.byteOffset + 8 + count * dims * 4));
  return Array.from({ length: count }, (_, i) => Array.from(flat.subarray(i * dims, (i + 1) * dims)));
}
