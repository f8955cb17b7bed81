/**
 * Picking the best-scored rows of a search (the full text and the vector leg): the k-th largest score and
 * the best `limit` rows in order.
 */

/** Rows best first (higher score first; ties: lower row first) with their scores. */
export interface TopRows {
  rows: Uint32Array;
  scores: Float64Array;
}

/** The k-th largest of values[0..n) (1-based k ≤ n); reorders `values`. */
export function kthLargest(values: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target]!;
  }
  return values[target]!;
}

/** The best `limit` of rows[0..n) by scores[0..n), best first. */
export function bestRows(rows: Uint32Array, scores: Float64Array, n: number, limit: number): TopRows {
  // The rows at or above the limit-th best score (ties at the cut may make them more than `limit`).
  const cut = n > limit ? kthLargest(scores.slice(0, n), n, limit) : -Infinity;
  let kept = 0;
  for (let i = 0; i < n; i++) if (scores[i]! >= cut) kept++;
  const top = { rows: new Uint32Array(kept), scores: new Float64Array(kept) };
  for (let i = 0, k = 0; i < n; i++) {
    if (scores[i]! < cut) continue;
    top.rows[k] = rows[i]!;
    top.scores[k++] = scores[i]!;
  }
  sortBestFirst(top.rows, top.scores, 0, kept - 1);
  return kept > limit ? { rows: top.rows.subarray(0, limit), scores: top.scores.subarray(0, limit) } : top;
}

/** Whether row a with score sa goes before row b with score sb. */
const before = (sa: number, a: number, sb: number, b: number) => sa > sb || (sa === sb && a < b);

/**
 * Sorts rows[lo..hi] and their scores best first, in place: a quicksort with the comparison inline
 * (Array.prototype.sort calling a comparator costs several times more).
 */
function sortBestFirst(rows: Uint32Array, scores: Float64Array, lo: number, hi: number): void {
  while (hi - lo > 16) {
    const middle = (lo + hi) >>> 1;
    const pivotScore = scores[middle]!;
    const pivotRow = rows[middle]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (before(scores[i]!, rows[i]!, pivotScore, pivotRow)) i++;
      while (before(pivotScore, pivotRow, scores[j]!, rows[j]!)) j--;
      if (i <= j) {
        const score = scores[i]!;
        scores[i] = scores[j]!;
        scores[j] = score;
        const row = rows[i]!;
        rows[i] = rows[j]!;
        rows[j] = row;
        i++;
        j--;
      }
    }
    // Recurse into the smaller side, loop on the larger.
    if (j - lo < hi - i) {
      sortBestFirst(rows, scores, lo, j);
      lo = i;
    } else {
      sortBestFirst(rows, scores, i, hi);
      hi = j;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    const score = scores[i]!;
    const row = rows[i]!;
    let j = i - 1;
    while (j >= lo && before(score, row, scores[j]!, rows[j]!)) {
      scores[j + 1] = scores[j]!;
      rows[j + 1] = rows[j]!;
      j--;
    }
    scores[j + 1] = score;
    rows[j + 1] = row;
  }
}
