import assert from 'node:assert/strict';
import { HammingRows } from '../../../../src/index/vectors/hamming-wasm.js';
import { toSignBits } from '../../../../src/index/vectors/vector-codec.js';

/** Bits set in a byte, counted one by one. */
const ones = (byte: number) => [...byte.toString(2)].filter((b) => b === '1').length;

describe('Hamming distances in WebAssembly (hamming-wasm.ts)', () => {
  for (const dim of [1, 8, 40, 64, 100, 384, 1024]) {
    it(`equal a plain count of differing bits at ${dim} dimensions`, () => {
      let seed = dim;
      const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5;
      const rows = Array.from({ length: 50 }, () => toSignBits(Array.from({ length: dim }, next)));
      const scan = new HammingRows(Buffer.concat(rows), rows.length, dim);
      for (const query of [rows[7]!, toSignBits(Array.from({ length: dim }, next))]) {
        const expected = rows.map((row) => row.reduce((sum, byte, i) => sum + ones(byte ^ query[i]!), 0));
        assert.deepEqual([...scan.distances(query)], expected);
      }
    });
  }
});
