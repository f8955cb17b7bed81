import fs from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';

/** What a file looked like when it was copied: a blob rewritten since (new inode, size or time) is copied again. */
export interface FileStamp {
  size: number;
  mtimeMs: number;
  ino: number;
}

export type TreeStamps = Map<string, FileStamp>;

const PARALLEL_COPIES = 8;

/**
 * Copies every file below `from` to the same relative path below `to`, skipping files whose stamp in
 * `already` is unchanged; returns the stamps of what the destination now holds and how many files this
 * pass copied. Files that vanish
 * while the walk runs (a blob deleted meanwhile) are skipped; half-written blobs (`*.tmp`, see
 * FsBlobStore.put) are never copied.
 */
export async function copyTree(from: string, to: string, already: TreeStamps = new Map()): Promise<{ stamps: TreeStamps; copied: number }> {
  const stamps: TreeStamps = new Map(already);
  let copied = 0;
  const files = await listFiles(from);
  let next = 0;
  const copyNext = async (): Promise<void> => {
    while (next < files.length) {
      const rel = files[next++]!;
      const source = path.join(from, rel);
      let stat;
      try {
        stat = await fs.stat(source);
      } catch (err) {
        if (isGone(err)) continue;
        throw err;
      }
      const stamp = { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino };
      const before = already.get(rel);
      if (before && before.size === stamp.size && before.mtimeMs === stamp.mtimeMs && before.ino === stamp.ino) continue;
      const target = path.join(to, rel);
      await fs.mkdir(path.dirname(target), { recursive: true });
      try {
        await fs.copyFile(source, target, constants.COPYFILE_FICLONE);
        stamps.set(rel, stamp);
        copied++;
      } catch (err) {
        if (!isGone(err)) throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_COPIES }, copyNext));
  return { stamps, copied };
}

/** Relative paths of the regular files below `root` ([] when it does not exist). */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (isGone(err)) return;
      throw err;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && !entry.name.endsWith('.tmp')) out.push(path.relative(root, full));
    }
  };
  await walk(root);
  return out;
}

/** Bytes and count of the files below `root`. */
export async function treeSize(root: string): Promise<{ files: number; bytes: number }> {
  let bytes = 0;
  const files = await listFiles(root);
  for (const rel of files) bytes += (await fs.stat(path.join(root, rel))).size;
  return { files: files.length, bytes };
}

/** True when `child` is `parent` or below it. */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
