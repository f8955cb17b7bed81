import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** BEIR SciFact (test split) as shipped in /work/shared/data/scifact (see its README). */
export const SCIFACT_DIR = process.env.SCIFACT_DIR ?? '/work/shared/data/scifact';

export interface SciFactDoc {
  id: string;
  title: string;
  text: string;
}

export interface SciFact {
  corpus: SciFactDoc[];
  /** Only the queries judged in qrels/test.tsv (the 300 test queries). */
  queries: { id: string; text: string }[];
  /** query id → relevant doc ids. */
  qrels: Map<string, Set<string>>;
}

function jsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

export function scifactAvailable(dir = SCIFACT_DIR): boolean {
  return existsSync(join(dir, 'corpus.jsonl'));
}

export function loadSciFact(dir = SCIFACT_DIR): SciFact {
  const corpus = jsonLines<{ _id: string; title: string; text: string }>(join(dir, 'corpus.jsonl'))
    .map((d) => ({ id: d._id, title: d.title, text: d.text }));
  const qrels = new Map<string, Set<string>>();
  // CRLF line endings: split on \r?\n so the score column is not "1\r".
  for (const line of readFileSync(join(dir, 'qrels', 'test.tsv'), 'utf8').split(/\r?\n/).slice(1)) {
    const [queryId, docId, score] = line.split('\t');
    if (!queryId || !docId || Number(score) <= 0) continue;
    qrels.set(queryId, (qrels.get(queryId) ?? new Set()).add(docId));
  }
  const queries = jsonLines<{ _id: string; text: string }>(join(dir, 'queries.jsonl'))
    .filter((q) => qrels.has(q._id))
    .map((q) => ({ id: q._id, text: q.text }));
  return { corpus, queries, qrels };
}
