import zlib from 'node:zlib';

export interface Inflated {
  /** Bytes produced (past `cap` when `over`). */
  bytes: number;
  /** Inflation was stopped because it went past the cap. */
  over: boolean;
}

/**
 * How many bytes deflate data really inflates to, counted while inflating and stopped just past `cap`:
 * the output is thrown away chunk by chunk, so a bomb costs at most `cap` bytes of work and a chunk of
 * memory. Damaged data counts what inflated before the damage (the parser reports the damage itself).
 */
export function inflatedSize(data: Uint8Array, format: 'raw' | 'zlib', cap: number): Promise<Inflated> {
  return new Promise((resolve) => {
    const inflater = format === 'raw' ? zlib.createInflateRaw({ chunkSize: 256 * 1024 }) : zlib.createInflate({ chunkSize: 256 * 1024 });
    let bytes = 0;
    let settled = false;
    const finish = (over: boolean) => {
      if (settled) return;
      settled = true;
      inflater.destroy();
      resolve({ bytes, over });
    };
    inflater.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > cap) finish(true);
    });
    inflater.on('end', () => finish(false));
    inflater.on('error', () => finish(false));
    inflater.end(data);
  });
}
