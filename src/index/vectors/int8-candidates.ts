/**
 * The coarse stage of vector search from the int8 copies (int8-rows.ts): the `count` rows of the highest
 * approximate cosine within the filter, for the exact stage to rank. Groups without an int8 copy (small
 * ones, ≤ INT8_MIN_ROWS rows) give all their rows: small datasets are searched exactly.
 *
 * Where the copies hold 4-bit rows (and the relaxed kernel is this thread's), a first pass scans those
 * (half the bytes: the scan is bound by memory) for the best `count × INT4_FACTOR` rows, whose int8 scores
 * then pick the `count`: the same rows as scanning every int8 row whenever the int8 best are among them.
 */
import { scanInt4, scanInt8, toInt8Query, type Int4Scan, type Int8Rows, type Int8Scan } from './int8-rows.js';
import { kthLargest } from './top-rows.js';

/** A group of up to this many rows gets no int8 copy: all its rows go to the exact stage. */
export const INT8_MIN_ROWS = 2048;

/** The 4-bit first pass keeps this many times `count` rows for their int8 scores. */
export const INT4_FACTOR = 3;

/** What the coarse stage needs of a dataset's vectors of one dimension. */
export interface ScanGroup {
  dim: number;
  /** chunk_rows rowids, ascending. */
  rows: Float64Array;
  /** Per row: 1 = available. */
  available: Uint8Array;
  /** Absent for groups of at most INT8_MIN_ROWS rows in a copy that holds the float32 vectors. */
  int8?: Int8Rows;
}

export interface CandidateFilter {
  availableOnly?: boolean;
  /** Only these rows (e.g. the chunks of the selected documents). */
  rows?: ReadonlySet<number>;
}

/** The coarse stage's candidates in order: each one's row id, and where it is (its group, its position there). */
export interface Candidates {
  rows: number[];
  groups: ScanGroup[];
  positions: number[];
}

/**
 * The `count` rows (of groups of the query's dimension) nearest to `vector` by int8 cosine, within the
 * filter, plus every row of the groups without an int8 copy, each with where it is (so that the exact stage
 * need not look its row up); undefined when a group cannot be scanned on this thread (the caller takes the
 * sign bits). `int4Factor`: how many times `count` rows the 4-bit pass keeps (0: no 4-bit pass; for the bench).
 */
export function int8Candidates(
  groups: ScanGroup[], vector: ArrayLike<number>, filter: CandidateFilter, count: number, { int4Factor = INT4_FACTOR } = {},
): Candidates | undefined {
  const dim = vector.length;
  const scoped = groups.filter((g) => g.dim === dim);
  const candidates: Candidates = { rows: [], groups: [], positions: [] };
  const query = toInt8Query(vector, dim);
  // A zero question has no cosine with anything (as in SQL): no candidates.
  if (!query) return candidates;
  const withInt8 = scoped.filter((group): group is ScanGroup & { int8: Int8Rows } => group.int8 !== undefined);
  for (const group of scoped) {
    if (group.int8) continue;
    const positions: number[] = [];
    for (let i = 0; i < group.rows.length; i++) if (accepts(group, i, filter)) positions.push(i);
    add(candidates, [{ group, positions }]);
  }
  // The 4-bit pass only where every group has it: one ranking across the groups.
  if (int4Factor > 0 && withInt8.length > 0 && withInt8.every((group) => group.int8.int4)) {
    const scanned: { group: ScanGroup; scan: Int4Scan }[] = [];
    for (const group of withInt8) {
      const scan = scanInt4(group.int8, query);
      if (!scan) break;
      scanned.push({ group, scan });
    }
    if (scanned.length === withInt8.length) return add(candidates, rescored(scanned, filter, count, Math.ceil(count * int4Factor)));
  }
  const scanned: { group: ScanGroup; scan: Int8Scan }[] = [];
  for (const group of withInt8) {
    const scan = scanInt8(group.int8, query);
    if (!scan) return undefined;
    scanned.push({ group, scan });
  }
  return add(candidates, best(above(scanned, filter, count), filter, count));
}

/** The best `first` rows by 4-bit score, then of those the best `count` by int8 score. */
function rescored(scanned: { group: ScanGroup; scan: Int4Scan }[], filter: CandidateFilter, count: number, first: number): Found[] {
  const kept = best(above(scanned, filter, first), filter, first);
  for (const { scan, positions } of kept) scan.rescore(positions);
  return best(kept, filter, count);
}

/** Appends the rows found, group by group, to the candidates. */
function add(candidates: Candidates, found: { group: ScanGroup; positions: ArrayLike<number> }[]): Candidates {
  for (const { group, positions } of found) {
    for (let k = 0; k < positions.length; k++) {
      candidates.rows.push(group.rows[positions[k]!]!);
      candidates.groups.push(group);
      candidates.positions.push(positions[k]!);
    }
  }
  return candidates;
}

/** Every this many scores, one is sampled to place the threshold. */
const SAMPLES = 4096;
/** The threshold aims at this many times `count` rows, so that one pass usually suffices. */
const MARGIN = 1.25;

/** Positions of a group's rows (ascending) and its scan's scores, by position. */
interface Found<S extends Int8Scan = Int8Scan> {
  group: ScanGroup;
  scan: S;
  positions: ArrayLike<number>;
}

/**
 * Per group, the positions whose scores are above a threshold that at least `count` rows the filter accepts
 * reach (all rows when fewer are accepted). A threshold placed from a sample of the scores leaves a few more than `count`
 * rows above it (found in WebAssembly): JS looks at ~count × MARGIN rows, not at every row. A threshold
 * that leaves too few is lowered and the pass run again (rare: a filter that rejects most of the best rows).
 */
function above<S extends Int8Scan>(scanned: { group: ScanGroup; scan: S }[], filter: CandidateFilter, count: number): Found<S>[] {
  const total = scanned.reduce((n, s) => n + s.scan.scores.length, 0);
  if (total === 0 || count <= 0) return [];
  const step = Math.max(1, Math.floor(total / SAMPLES));
  const sample = new Float64Array(Math.ceil(total / step) + scanned.length);
  let sampled = 0;
  let accepted = 0;
  for (const { group, scan: { scores } } of scanned) {
    for (let i = 0; i < scores.length; i += step) {
      sampled++;
      if (accepts(group, i, filter)) sample[accepted++] = scores[i]!;
    }
  }
  // Rows per sampled one; the threshold is the sampled score with `count × MARGIN` rows above it.
  const perSample = total / sampled;
  let place = Math.ceil((count * MARGIN) / perSample);
  for (;;) {
    // Selected, not sorted: only the one score is needed.
    const threshold = place < accepted ? kthLargest(sample, accepted, place + 1) : -Infinity;
    const found = scanned.map(({ group, scan }) => ({ group, scan, positions: scan.above(threshold) }));
    let taken = 0;
    for (const { group, positions } of found) {
      for (const i of positions) if (accepts(group, i, filter)) taken++;
    }
    if (taken >= count || threshold === -Infinity) return found;
    place = Math.max(place * 4, place + 1);
  }
}

/**
 * Of the positions found, those of the `count` highest scores that the filter accepts, in scan order
 * (ties at the last place broken by scan order): cut at the count-th best.
 */
function best<S extends Int8Scan>(found: Found<S>[], filter: CandidateFilter, count: number): Found<S>[] {
  const values = new Float64Array(found.reduce((n, f) => n + f.positions.length, 0));
  let taken = 0;
  for (const { group, scan, positions } of found) {
    for (let k = 0; k < positions.length; k++) {
      const i = positions[k]!;
      if (accepts(group, i, filter)) values[taken++] = scan.scores[i]!;
    }
  }
  // The count-th best score; rows above it, then rows at it in scan order, fill the places.
  const last = taken > count ? kthLargest(values, taken, count) : -Infinity;
  let higher = 0;
  for (let i = 0; i < taken; i++) if (values[i]! > last) higher++;
  // Places left for rows scoring exactly `last`, after the rows above it.
  let ties = count - higher;
  return found.map(({ group, scan, positions }) => {
    const kept: number[] = [];
    for (let k = 0; k < positions.length; k++) {
      const i = positions[k]!;
      const score = scan.scores[i]!;
      if (score < last || !accepts(group, i, filter)) continue;
      if (score === last && ties-- <= 0) continue;
      kept.push(i);
    }
    return { group, scan, positions: kept };
  });
}

function accepts(group: ScanGroup, i: number, filter: CandidateFilter): boolean {
  return !(filter.availableOnly && group.available[i] !== 1) && !(filter.rows && !filter.rows.has(group.rows[i]!));
}
