import fs from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '../../blobs/types.js';
import { listFiles } from '../blob-tree.js';

const PARALLEL_PUTS = 8;

export interface CopiedFiles {
  /** Files found below the source folder (half-written `*.tmp` files excluded). */
  found: number;
  /** Files the target store accepted. */
  copied: number;
  bytes: number;
}

/**
 * Puts every file below the file store's folder into the target store under the same key (the key is
 * the path below the folder, as FsBlobStore maps them). Overwrites: a rerun puts everything again.
 */
export async function copyBlobs(sourceDir: string, target: BlobStore, progress: (done: CopiedFiles) => void): Promise<CopiedFiles> {
  const files = await listFiles(sourceDir);
  const state: CopiedFiles = { found: files.length, copied: 0, bytes: 0 };
  let next = 0;
  const putNext = async (): Promise<void> => {
    while (next < files.length) {
      const rel = files[next++]!;
      const key = rel.split(path.sep).join('/');
      const bytes = await fs.readFile(path.join(sourceDir, rel));
      try {
        await target.put(key, bytes);
      } catch (err) {
        throw new Error(`copying the file ${key} failed: ${(err as Error).message}`);
      }
      state.copied++;
      state.bytes += bytes.byteLength;
      progress(state);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_PUTS }, putNext));
  return state;
}
