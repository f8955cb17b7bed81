/**
 * Bounded top-k over posting lists (MaxScore), with the exhaustive search's result bit for bit.
 *
 * Every word has an upper bound of what it can add to a row's score (its idf times bm25's term factor at
 * the word's largest weighted frequency and shortest row). Words are scanned term at a time, highest bound
 * first, into the dense accumulator. Once `limit` rows that pass the filter score at least θ and the
 * bounds of the words not yet scanned add up to less than θ, a row none of the scanned words holds cannot
 * enter the best `limit`: the remaining (common, long) lists are not scanned, only probed for the rows
 * still in the running (galloping search; rows are ascending in every list), which are pruned again after
 * each word as θ rises and the remaining bounds shrink.
 *
 * The accumulator holds the sums as Float32 (4 bytes per row, so that it stays in the caches at 1M rows)
 * and adds the words in bound order, so its sums differ from FTS5's (float64, the question's order) by
 * Float32's rounding. They only decide which rows stay in the running: every comparison gives way by a
 * relative margin above that rounding (sumSlack), so a row whose exact score could reach the cut is kept.
 * The rows left at the end (about `limit`) are scored again in float64 in the question's order, the way
 * the exhaustive search scores every row, and the best `limit` are picked from those exact scores.
 */
import { B, K1, lengthTerm } from './fts5-bm25.js';
import { bestRows, kthLargest, type TopRows } from '../vectors/top-rows.js';

/** Relative give of the words' bounds, against the rounding of the terms they bound. */
const SLACK = 1e-9;

/**
 * Relative give of a comparison of accumulated sums of `words` terms: each Float32 addition of a positive
 * term rounds by at most 2^-24 of the sum so far, so a sum is within (words + 1)·2^-24 of the exact one
 * (the terms' own rounding included), to first order; doubled for the float64 roundings and the
 * second-order terms.
 */
export function sumSlack(words: number): number {
  return (words + 2) * 2 ** -23 + SLACK;
}

/** What a search reads of a dataset's posting lists. */
export interface PostingLists {
  /** Term t's postings are [offsets[t], offsets[t + 1]). */
  offsets: Uint32Array;
  /** Rows, ascending within each term. */
  rows: Uint32Array;
  /** Column-weighted occurrences. */
  freqs: Uint16Array | Uint32Array;
  /** Per term: the largest of its weighted occurrences. */
  maxFreqs: Uint16Array | Uint32Array;
  /** Per term: the fewest tokens of a row that holds it. */
  minLengths: Uint32Array;
}

/** A question's word as a term of the lists, with its idf. */
export interface TermWord {
  term: number;
  idf: number;
}

/**
 * The search's work, added to by every search that is given it: postings read in full (term at a time)
 * and posting-list probes for single rows.
 */
export interface SearchCounters {
  postings: number;
  probes: number;
}

export interface ScoringScratch {
  /** Per row: its score so far, 0 between searches. */
  sums: Float32Array;
  /** Per row: its tokens (bm25's D). */
  lengths: Uint16Array | Uint32Array;
  /** Room for every row. */
  touched: Uint32Array;
  /** A bit per row, all 0 between searches. */
  marks: Uint32Array;
  /** The search's other arrays, kept for the next search. */
  buffers: SearchBuffers;
}

/**
 * The arrays a search works in (the rows in the running, their sums, ...), kept from one search to the
 * next and grown when a search needs more: fresh arrays of up to a few hundred kilobytes per search add up
 * to the external memory that makes V8 collect the whole heap every few dozen searches (a pause of several
 * milliseconds in the slowest searches).
 */
export class SearchBuffers {
  passing: Uint32Array = new Uint32Array(1024);
  /** The passing rows' scores as kthScore read them, in the same order. */
  passingScores: Float64Array = new Float64Array(1024);
  /** Scores selected from (kthScore, estimatedKth, the last cut); free between those uses. */
  values: Float64Array = new Float64Array(1024);
  sums: Float64Array = new Float64Array(0);
  lengthTerms: Float64Array = new Float64Array(0);
  exact: Float64Array = new Float64Array(0);
  found: Int32Array = new Int32Array(0);

  /** Room for n rows in the running: sums, lengthTerms, exact and found. */
  reserve(n: number): void {
    if (this.sums.length >= n) return;
    const size = Math.max(n, 2 * this.sums.length);
    this.sums = new Float64Array(size);
    this.lengthTerms = new Float64Array(size);
    this.exact = new Float64Array(size);
    this.found = new Int32Array(size);
  }

  /** `passingScores` with room for n. */
  passingScoresFor(n: number): Float64Array {
    if (this.passingScores.length < n) this.passingScores = new Float64Array(Math.max(n, 2 * this.passingScores.length));
    return this.passingScores;
  }

  /** `values` with room for n. */
  valuesFor(n: number): Float64Array {
    if (this.values.length < n) this.values = new Float64Array(Math.max(n, 2 * this.values.length));
    return this.values;
  }

  get bytes(): number {
    return this.passing.byteLength + this.passingScores.byteLength + this.values.byteLength + this.sums.byteLength
      + this.lengthTerms.byteLength + this.exact.byteLength + this.found.byteLength;
  }
}

/** The first index in [from, end) whose row is ≥ row (end if none): galloping, then binary search. */
function seek(rows: Uint32Array, from: number, end: number, row: number): number {
  if (from >= end || rows[from]! >= row) return from;
  let below = from;
  let step = 1;
  let above = from + 1;
  while (above < end && rows[above]! < row) {
    below = above;
    step *= 2;
    above = below + step;
  }
  if (above > end) above = end;
  while (above - below > 1) {
    const middle = (below + above) >>> 1;
    if (rows[middle]! < row) below = middle;
    else above = middle;
  }
  return above;
}

/** How far below the sampled estimate of the k-th score kthScore first looks for it. */
const GUESS_MARGIN = 0.9;

/**
 * The k-th largest accumulated score of candidates[0..n) (k ≤ n), known to be at least `atLeast`: only
 * the scores from there up are selected from, and first only those from GUESS_MARGIN × `estimate` up
 * (when k of them are, the k-th is among them). Leaves every candidate's score in buffers.passingScores.
 */
function kthScore(sums: Float32Array, candidates: Uint32Array, n: number, k: number, buffers: SearchBuffers, atLeast: number, estimate: number): number {
  const values = buffers.valuesFor(n);
  const scores = buffers.passingScoresFor(n);
  const floor = estimate < Infinity ? Math.max(atLeast, estimate * GUESS_MARGIN) : atLeast;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const score = sums[candidates[i]!]!;
    scores[i] = score;
    if (score >= floor) values[count++] = score;
  }
  if (count < k && floor > atLeast) {
    count = 0;
    for (let i = 0; i < n; i++) if (scores[i]! >= atLeast) values[count++] = scores[i]!;
  }
  return kthLargest(values, count, k);
}

/** Sorts rows[0..n) (distinct) ascending through the marks bitmap, which is left all 0: O(n + rows / 32). */
function sortRows(rows: Uint32Array, n: number, marks: Uint32Array): void {
  for (let i = 0; i < n; i++) marks[rows[i]! >>> 5]! |= 1 << (rows[i]! & 31);
  for (let word = 0, k = 0; k < n; word++) {
    let bits = marks[word]!;
    if (bits === 0) continue;
    marks[word] = 0;
    while (bits !== 0) {
      const lowest = bits & -bits;
      rows[k++] = (word << 5) + 31 - Math.clz32(lowest);
      bits ^= lowest;
    }
  }
}

/** A list at most this many times longer than the rows looked up in it is merged with them rather than searched. */
const MERGE_FACTOR = 4;

/**
 * For each of candidates[0..n) (ascending), the index of its posting among rows[from..end), or -1, into
 * `found`: by walking both in step when the list is short, else by galloping search.
 */
function findPostings(rows: Uint32Array, from: number, end: number, candidates: Uint32Array, n: number, found: Int32Array): void {
  let p = from;
  if (end - from < MERGE_FACTOR * n) {
    for (let i = 0; i < n; i++) {
      const r = candidates[i]!;
      while (p < end && rows[p]! < r) p++;
      found[i] = p < end && rows[p] === r ? p : -1;
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const r = candidates[i]!;
    p = seek(rows, p, end, r);
    found[i] = p < end && rows[p] === r ? p : -1;
  }
}

/** Rows sampled for an estimate of the k-th score: one in SAMPLE_STRIDE, when that leaves enough. */
const SAMPLE_STRIDE = 8;
const MIN_SAMPLE = 256;

/**
 * An estimate of the k-th largest accumulated score of candidates[0..n) (k ≤ n) from a sample, to skip
 * computing it exactly when it would not stop the scan anyway (any mistake costs time, not exactness).
 */
function estimatedKth(sums: Float32Array, candidates: Uint32Array, n: number, k: number, buffers: SearchBuffers): number {
  const size = Math.floor(n / SAMPLE_STRIDE);
  if (size < MIN_SAMPLE) return Infinity;
  const values = buffers.valuesFor(size);
  for (let i = 0; i < size; i++) values[i] = sums[candidates[i * SAMPLE_STRIDE]!]!;
  return kthLargest(values, size, Math.max(1, Math.round((k * size) / n)));
}

/** A copy of the first `used` items of `items` with room for at least `size`. */
function grown(items: Uint32Array, size: number, used: number): Uint32Array {
  const bigger = new Uint32Array(Math.max(size, 2 * items.length));
  bigger.set(items.subarray(0, used));
  return bigger;
}

/**
 * The best `limit` rows that pass `passes` (undefined: every row) for the words, best first, with the
 * scores the exhaustive search gives them (words added in the order given) for the table's `averageLength`.
 */
export function maxScoreTopRows(
  lists: PostingLists,
  words: TermWord[],
  { sums: accumulator, lengths, touched, marks, buffers }: ScoringScratch,
  averageLength: number,
  passes: ((row: number) => boolean) | undefined,
  limit: number,
  counters?: SearchCounters,
): TopRows {
  const { offsets, rows, freqs, maxFreqs, minLengths } = lists;
  const m = words.length;
  const slack = sumSlack(m);
  // bm25's k1·(1 − b + b·D/avgdl) as a + c·D: within a few float64 ulps of the exact expression, far
  // below the Float32 sums' slack (the exact scores use lengthTerm).
  const lengthBase = K1 * (1 - B);
  const lengthSlope = (K1 * B) / averageLength;
  const bounds = words.map(({ term, idf }) => {
    const f = maxFreqs[term]!;
    return idf * ((f * (K1 + 1)) / (f + lengthTerm(minLengths[term]!, averageLength))) * (1 + SLACK);
  });
  const order = words.map((_, i) => i).sort((a, b) => bounds[b]! - bounds[a]! || listLength(a) - listLength(b));
  function listLength(i: number): number {
    const t = words[i]!.term;
    return offsets[t + 1]! - offsets[t]!;
  }
  // remaining[j]: the most the words order[j..] can add to a row.
  const remaining = new Float64Array(m + 1);
  for (let j = m - 1; j >= 0; j--) remaining[j] = remaining[j + 1]! + bounds[order[j]!]!;

  let touchedCount = 0;
  try {
    // Term at a time over the words with the highest bounds, until the rest cannot bring in a new row.
    // θ (threshold) is the limit-th best score so far of the rows that pass, less the slack; it is
    // recomputed only when it may have risen above what the words left can add.
    let threshold = 0;
    let kth = 0;
    /** The list after which kthScore last read the passing rows' scores. */
    let scoredAfter = -1;
    let addedSinceKth = Infinity;
    let passing = buffers.passing;
    let passingCount = 0;
    let scanned = 0;
    for (; scanned < m && !(remaining[scanned]! < threshold); scanned++) {
      const { term, idf } = words[order[scanned]!]!;
      const end = offsets[term + 1]!;
      const touchedBefore = touchedCount;
      for (let p = offsets[term]!; p < end; p++) {
        const r = rows[p]!;
        const f = freqs[p]!;
        const sum = accumulator[r]!;
        if (sum === 0) touched[touchedCount++] = r;
        accumulator[r] = sum + idf * ((f * (K1 + 1)) / (f + lengthBase + lengthSlope * lengths[r]!));
      }
      if (counters) counters.postings += end - offsets[term]!;
      if (passing.length < touchedCount) passing = buffers.passing = grown(passing, touchedCount, passingCount);
      if (!passes) {
        passing.set(touched.subarray(touchedBefore, touchedCount), passingCount);
        passingCount += touchedCount - touchedBefore;
      } else {
        for (let i = touchedBefore; i < touchedCount; i++) if (passes(touched[i]!)) passing[passingCount++] = touched[i]!;
      }
      addedSinceKth += bounds[order[scanned]!]!;
      const ceiling = Math.min(kth + addedSinceKth, remaining[0]! - remaining[scanned + 1]!);
      if (scanned + 1 < m && passingCount >= limit && remaining[scanned + 1]! < ceiling) {
        const estimate = estimatedKth(accumulator, passing, passingCount, limit, buffers);
        if (estimate < remaining[scanned + 1]!) continue;
        kth = kthScore(accumulator, passing, passingCount, limit, buffers, kth, estimate);
        scoredAfter = scanned;
        threshold = kth * (1 - slack);
        addedSinceKth = 0;
      }
    }

    // The rows still in the running, ascending, with their scores and length terms gathered side by side:
    // from here on every pass reads these compact arrays in order, not the accumulator at random.
    // When θ was found after the last list scanned, the scores it read are still the rows' sums: pruning
    // reads those in order rather than the accumulator at random again (the same numbers, so the same rows).
    let n = scoredAfter === scanned - 1
      ? keepScored(buffers.passingScores, passing, passingCount, remaining[scanned]!, threshold, slack)
      : keepReaching(accumulator, passing, passingCount, remaining[scanned]!, threshold, slack);
    const candidates = passing;
    sortRows(candidates, n, marks);
    buffers.reserve(n);
    const { sums, lengthTerms, found } = buffers;
    for (let i = 0; i < n; i++) {
      const r = candidates[i]!;
      sums[i] = accumulator[r]!;
      lengthTerms[i] = lengthTerm(lengths[r]!, averageLength);
    }
    /** Adds the word's BM25 term to `into` for each of the first n candidates it occurs in. */
    const addWord = ({ term, idf }: { term: number; idf: number }, into: Float64Array) => {
      findPostings(rows, offsets[term]!, offsets[term + 1]!, candidates, n, found);
      for (let i = 0; i < n; i++) {
        const p = found[i]!;
        if (p < 0) continue;
        const f = freqs[p]!;
        into[i]! += idf * ((f * (K1 + 1)) / (f + lengthTerms[i]!));
      }
      if (counters) counters.probes += n;
    };
    for (let j = scanned; j < m; j++) {
      addWord(words[order[j]!]!, sums);
      n = keepGathered(candidates, sums, lengthTerms, n, remaining[j + 1]!, threshold, slack);
    }

    // Every word is in the sums now: keep the rows that may be among the best, and score them exactly.
    if (n > limit) {
      const values = buffers.valuesFor(n);
      values.set(sums.subarray(0, n));
      n = keepGathered(candidates, sums, lengthTerms, n, 0, kthLargest(values, n, limit) * (1 - slack), slack);
    }
    const exact = buffers.exact.fill(0, 0, n);
    for (const word of words) addWord(word, exact);
    return bestRows(candidates, exact, n, limit);
  } finally {
    // Clearing a row costs a cache line's traffic: past one row in 16, writing the whole array in order is cheaper.
    if (touchedCount > accumulator.length >>> 4) accumulator.fill(0);
    else for (let i = 0; i < touchedCount; i++) accumulator[touched[i]!] = 0;
  }
}

/** keepReaching on gathered candidates: their sums and length terms move with them. */
function keepGathered(candidates: Uint32Array, sums: Float64Array, lengthTerms: Float64Array, n: number, rest: number, threshold: number, slack: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const sum = sums[i]!;
    if (sum * (1 + slack) + rest < threshold) continue;
    candidates[kept] = candidates[i]!;
    sums[kept] = sum;
    lengthTerms[kept++] = lengthTerms[i]!;
  }
  return kept;
}

/** keepReaching with the candidates' scores given side by side (scores[i] is candidates[i]'s). */
function keepScored(scores: Float64Array, candidates: Uint32Array, n: number, rest: number, threshold: number, slack: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) if (scores[i]! * (1 + slack) + rest >= threshold) candidates[kept++] = candidates[i]!;
  return kept;
}

/** Keeps (in order, in place) the candidates whose score plus `rest` may reach `threshold`; returns how many. */
function keepReaching(sums: Float32Array, candidates: Uint32Array, n: number, rest: number, threshold: number, slack: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const r = candidates[i]!;
    if (sums[r]! * (1 + slack) + rest >= threshold) candidates[kept++] = r;
  }
  return kept;
}
