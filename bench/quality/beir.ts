import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** BEIR SciFact (test split) as shipped in /work/shared/data/scifact (see its README): the default data set. */
export const SCIFACT_DIR = process.env.SCIFACT_DIR ?? '/work/shared/data/scifact';

export interface BeirDoc {
  id: string;
  title: string;
  text: string;
}

/** A BEIR-format data set: corpus.jsonl, queries.jsonl and qrels/test.tsv (query-id, corpus-id, score). */
export interface Beir {
  corpus: BeirDoc[];
  /** Only the queries judged in qrels/test.tsv. */
  queries: { id: string; text: string }[];
  /** query id → doc id → graded relevance (> 0). */
  qrels: Map<string, Map<string, number>>;
}

function jsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

export function beirAvailable(dir = SCIFACT_DIR): boolean {
  return existsSync(join(dir, 'corpus.jsonl'));
}

export function loadBeir(dir = SCIFACT_DIR): Beir {
  for (const file of ['corpus.jsonl', 'queries.jsonl', join('qrels', 'test.tsv')]) {
    if (!existsSync(join(dir, file))) throw new Error(`${dir} is not a BEIR folder: ${file} is missing`);
  }
  const corpus = jsonLines<{ _id: string; title?: string; text: string }>(join(dir, 'corpus.jsonl'))
    .map((d) => ({ id: String(d._id), title: d.title ?? '', text: d.text }));
  const qrels = new Map<string, Map<string, number>>();
  // CRLF line endings: split on \r?\n so the score column is not "1\r". The first line is the header.
  for (const line of readFileSync(join(dir, 'qrels', 'test.tsv'), 'utf8').split(/\r?\n/).slice(1)) {
    const [queryId, docId, score] = line.split('\t');
    const grade = Number(score);
    if (!queryId || !docId || !(grade > 0)) continue;
    qrels.set(queryId, (qrels.get(queryId) ?? new Map()).set(docId, grade));
  }
  const queries = jsonLines<{ _id: string; text: string }>(join(dir, 'queries.jsonl'))
    .filter((q) => qrels.has(String(q._id)))
    .map((q) => ({ id: String(q._id), text: q.text }));
  return { corpus, queries, qrels };
}
