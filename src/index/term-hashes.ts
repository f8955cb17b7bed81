/**
 * A chunk's term set stored compactly: the sorted 32-bit FNV-1a hashes of its stems. Membership is a
 * binary search instead of a substring scan of the chunk's text (~20x faster on 2,000 candidates). A
 * false positive needs a hash collision with one of the chunk's ~100-300 stems: about 1 in 10^7 per test.
 */

export function stemHash(stem: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < stem.length; i++) {
    h ^= stem.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function encodeTermHashes(stems: Iterable<string>): Buffer {
  const hashes = Uint32Array.from(new Set([...stems].map(stemHash))).sort();
  return Buffer.from(hashes.buffer, hashes.byteOffset, hashes.byteLength);
}

/** A membership test over an encoded term set. */
export function termHashLookup(blob: Uint8Array): (stem: string) => boolean {
  // Copy first: Uint32Array needs a 4-aligned offset, which a BLOB's bytes need not have.
  return sortedHashLookup(new Uint32Array(new Uint8Array(blob).buffer));
}

/** A membership test over a term set already decoded to its sorted hashes. */
export function sortedHashLookup(hashes: Uint32Array): (stem: string) => boolean {
  return (stem) => {
    const h = stemHash(stem);
    let lo = 0;
    let hi = hashes.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const value = hashes[mid]!;
      if (value === h) return true;
      if (value < h) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  };
}
