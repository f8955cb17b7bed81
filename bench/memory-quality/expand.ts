/**
 * Query expansion experiment (pseudo-relevance feedback for multi-hop questions): search the question,
 * then search again with the question plus the best result's text (which names the person or thing the
 * question only describes: "my sister in Lisbon" → "Hana"), and fuse the two rankings by reciprocal rank
 * (1 / (60 + rank), summed). Measured in run.ts; see docs/memories.md "Quality" for whether it is kept.
 */
import type { Hit } from './run.js';

const RRF_K = 60;

/** The user's words of a raw turn, or an item's sentence: what the second query adds. */
function said(content: string): string {
  return /User Input: ([^\n]*)/.exec(content)?.[1] ?? content;
}

export async function expandedSearch(search: (query: string, extra: Record<string, string>) => Promise<Hit[]>, question: string, topN: number): Promise<Hit[]> {
  const first = await search(question, {});
  if (!first.length) return first;
  const second = await search(`${question} ${said(first[0]!.content)}`, {});
  const fused = new Map<number, { hit: Hit; score: number }>();
  for (const list of [first, second]) {
    list.forEach((hit, rank) => {
      const entry = fused.get(hit.message_id) ?? { hit, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(hit.message_id, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, topN).map((e) => ({ ...e.hit, similarity: e.score }));
}
