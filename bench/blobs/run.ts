/**
 * BlobStore benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/blobs/run.ts [--size-mb 1] [--runs 30] [--keys 2000]
 *
 * put and get latency of one object of `size-mb` MB, one call after another, on the file store (a
 * temporary folder) and on the S3 store against moto on loopback (the S3 server the tests use; a real
 * S3 or MinIO adds the network). Then deletePrefix of a folder of `keys` small objects.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { argument, percentile } from '../common.js';
import type { BlobStore } from '../../src/blobs/types.js';
import { FsBlobStore } from '../../src/blobs/fs-blob-store.js';
import { S3BlobStore } from '../../src/blobs/s3-blob-store.js';
import { startS3Server } from '../../test/support/s3-server.js';

const sizeMb = Number(argument('size-mb', '1'));
const runs = Number(argument('runs', '30'));
const keyCount = Number(argument('keys', '2000'));

async function measure(name: string, store: BlobStore): Promise<void> {
  const bytes = crypto.randomBytes(Math.round(sizeMb * 1024 * 1024));
  const puts: number[] = [];
  const gets: number[] = [];
  await store.put('warm-up', bytes);
  await store.get('warm-up');
  for (let i = 0; i < runs; i++) {
    let start = performance.now();
    await store.put(`objects/o${i}`, bytes);
    puts.push(performance.now() - start);
    start = performance.now();
    const got = await store.get(`objects/o${i}`);
    gets.push(performance.now() - start);
    if (!got?.equals(bytes)) throw new Error(`${name}: object ${i} came back different`);
  }
  const small = Buffer.from('x');
  for (let i = 0; i < keyCount; i += 32) {
    await Promise.all(Array.from({ length: Math.min(32, keyCount - i) }, (_, j) => store.put(`folder/${(i + j) % 7}/k${i + j}`, small)));
  }
  const start = performance.now();
  await store.deletePrefix('folder');
  const deleteMs = performance.now() - start;
  const ms = (v: number) => v.toFixed(1).padStart(7);
  console.log(
    `${name.padEnd(22)} put ${sizeMb} MB p50 ${ms(percentile(puts, 50))} ms p95 ${ms(percentile(puts, 95))} ms | ` +
      `get p50 ${ms(percentile(gets, 50))} ms p95 ${ms(percentile(gets, 95))} ms | deletePrefix ${keyCount} keys ${ms(deleteMs)} ms`,
  );
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-blobs-'));
const s3 = await startS3Server();
try {
  console.log(`${runs} sequential puts and gets of ${sizeMb} MB each, on ${os.cpus().length} CPUs`);
  await measure('file store', new FsBlobStore(dir));
  await s3.createBucket('bench');
  await measure('S3 store (moto, lo)', new S3BlobStore(s3.client, 'bench', 'cairn'));
} finally {
  await s3.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
