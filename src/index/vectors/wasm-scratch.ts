/** A WebAssembly memory page, in bytes. */
export const PAGE = 65536;

/**
 * This thread's scratch region in a shared `memory` (int8-rows.ts, cosine-wasm.ts): made once per memory, by
 * growing it by `bytes` (whole pages) and handing the region's start to `make`, then kept in `regions`.
 * Undefined when it cannot be had (no room left in the memory, no SIMD): the caller computes another way.
 */
export function scratchRegionOf<T>(
  regions: WeakMap<WebAssembly.Memory, T | null>, memory: WebAssembly.Memory, bytes: number, make: (at: number) => T,
): T | undefined {
  let region = regions.get(memory);
  if (region === undefined) {
    try {
      region = make(memory.grow(bytes / PAGE) * PAGE);
    } catch {
      region = null;
    }
    regions.set(memory, region);
  }
  return region ?? undefined;
}
