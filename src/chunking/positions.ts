import type { Position } from '../parsing/types.js';

/** Union of position lists in first-seen order, without duplicates; undefined when there are none. */
export function unionPositions(lists: ReadonlyArray<readonly Position[] | undefined>): Position[] | undefined {
  const seen = new Set<string>();
  const out: Position[] = [];
  for (const list of lists) {
    for (const p of list ?? []) {
      const key = p.join(',');
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(p);
    }
  }
  return out.length > 0 ? out : undefined;
}
