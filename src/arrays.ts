/**
 * Appends `items` to `target`. `target.push(...items)` passes every item as an argument, which overflows the
 * stack past ~100,000 items (the pieces of a 20 MB text file, the rows of a large table).
 */
export function appendAll<T>(target: T[], items: Iterable<T>): void {
  for (const item of items) target.push(item);
}
