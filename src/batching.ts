/** Splitting long work so that no single step holds the event loop for long. */

/** `items` in consecutive slices of at most `size`. */
export const chunksOf = <T>(items: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** Resolves on the event loop's next turn, after the I/O and timers already due (heartbeats, HTTP requests). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Runs `each` on consecutive slices of at most `size` items, the event loop turning between them. */
export async function eachSlice<T>(items: T[], size: number, each: (slice: T[]) => void): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    if (i > 0) await nextTurn();
    each(items.slice(i, i + size));
  }
}
