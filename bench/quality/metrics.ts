/** Graded-relevance IR metrics, as BEIR computes them (pytrec_eval ndcg_cut_10: linear gains; recall_100). */

/** nDCG@k with gain = the document's relevance grade (0 when unjudged) and discount log2(rank + 1). */
export function ndcgAt(k: number, ranked: string[], grades: Map<string, number>): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    dcg += (grades.get(id) ?? 0) / Math.log2(i + 2);
  });
  const best = [...grades.values()].filter((g) => g > 0).sort((a, b) => b - a).slice(0, k);
  const ideal = best.reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return ideal > 0 ? dcg / ideal : 0;
}

/** Share of the relevant (grade > 0) documents found in the first k. */
export function recallAt(k: number, ranked: string[], grades: Map<string, number>): number {
  const relevant = [...grades].filter(([, g]) => g > 0).length;
  if (relevant === 0) return 0;
  return ranked.slice(0, k).filter((id) => (grades.get(id) ?? 0) > 0).length / relevant;
}

export function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}
