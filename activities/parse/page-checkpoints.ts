import type { BlobStore } from '../../src/blobs/types.js';
import type { Checkpoints, PageRange } from '../../src/parsing/checkpoint.js';
import { readJson, writeJson } from '../work-files.js';

/** A run's finished page ranges, as the list of their first pages (the ranges' files are named after them). */
interface Manifest {
  ranges: number[];
}

/**
 * The finished page ranges of a run's file, stored as work files beside the run's others (so removed with them
 * when the run ends): `pages/<first page>.json` per range, then `pages/done.json` listing the ranges whose file
 * is complete. A retried attempt (the worker restarted, a parser process died) reads them back and resumes
 * after the last finished range. Saves arrive while the parse goes on; they are written one after another.
 */
export async function pageCheckpoints(blobs: BlobStore, prefix: string): Promise<Checkpoints & { flushed(): Promise<void> }> {
  const manifestKey = `${prefix}/pages/done.json`;
  const manifest: Manifest = (await blobs.get(manifestKey)) ? await readJson<Manifest>(blobs, manifestKey) : { ranges: [] };
  const done = await Promise.all(manifest.ranges.map((from) => readJson<PageRange>(blobs, `${prefix}/pages/${from}.json`)));
  let chain: Promise<void> = Promise.resolve();
  return {
    done,
    save(range) {
      chain = chain.then(async () => {
        await writeJson(blobs, `${prefix}/pages/${range.from}.json`, range);
        manifest.ranges.push(range.from);
        await writeJson(blobs, manifestKey, manifest);
      }).catch(() => {
        // A checkpoint that could not be stored only costs a retry its pages: the parse goes on.
      });
    },
    flushed: () => chain,
  };
}
