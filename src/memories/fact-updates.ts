/**
 * Facts stay current (pure: no I/O): the one structured question asked when a new semantic item is stored —
 * does it add to, update or contradict each similar fact the memory already holds? — and the reading of the
 * answer. MemoryExtractor.reconcileFacts does the searching and the invalidating.
 */
import { parseJsonObject } from './extraction.js';

export const FACT_RELATIONS = ['adds', 'updates', 'contradicts'] as const;
export type FactRelation = (typeof FACT_RELATIONS)[number];

/** A fact already in the memory, numbered for the model (1-based) in the question. */
export interface FactCandidate {
  message_id: number;
  content: string;
  valid_at: number;
}

export interface FactDecision {
  message_id: number;
  relation: FactRelation;
}

/** The first words of the system prompt: how a scripted test model recognises this question. */
export const FACT_UPDATE_PROMPT_START = 'You keep the facts of a memory current.';

export const FACT_UPDATE_SYSTEM_PROMPT = `${FACT_UPDATE_PROMPT_START}
A new fact was just learned. For each numbered existing fact, decide how the new fact relates to it:
- "adds": both can be true at once; the existing fact stays.
- "updates": the new fact is a newer value of the same thing (a changed preference, address, number, plan); the existing fact is outdated.
- "contradicts": the new fact says the existing one is wrong.
Answer one JSON object only: {"decisions": [{"id": <number of the existing fact>, "relation": "adds" | "updates" | "contradicts"}]}, one decision per existing fact.`;

const isoDate = (ms: number) => new Date(ms).toISOString();

export function factUpdateUserPrompt(newFact: { content: string; valid_at: number }, candidates: FactCandidate[]): string {
  const lines = candidates.map((c, i) => `${i + 1}. ${c.content} (since ${isoDate(c.valid_at)})`);
  return `New fact (${isoDate(newFact.valid_at)}): ${newFact.content}\n\nExisting facts:\n${lines.join('\n')}`;
}

/**
 * The decisions in the model's answer, mapped to message ids. Unknown numbers, unknown relations and repeats
 * are skipped (the first decision on a fact counts); an answer that is not a JSON object throws
 * InvalidExtractionError (the caller keeps every fact as it is). A fact the answer does not mention is kept.
 */
export function parseFactDecisions(answer: string, candidates: FactCandidate[]): FactDecision[] {
  const object = parseJsonObject(answer, 'a JSON object with a decisions list');
  const list = Array.isArray(object.decisions) ? object.decisions : [];
  const seen = new Set<number>();
  const decisions: FactDecision[] = [];
  for (const entry of list) {
    if (!entry || typeof entry !== 'object') continue;
    const { id, relation } = entry as { id?: unknown; relation?: unknown };
    const n = typeof id === 'string' ? Number(id) : id;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > candidates.length) continue;
    if (typeof relation !== 'string' || !(FACT_RELATIONS as readonly string[]).includes(relation.toLowerCase())) continue;
    const candidate = candidates[n - 1]!;
    if (seen.has(candidate.message_id)) continue;
    seen.add(candidate.message_id);
    decisions.push({ message_id: candidate.message_id, relation: relation.toLowerCase() as FactRelation });
  }
  return decisions;
}
