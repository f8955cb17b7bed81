import type { IngestionStepRow } from '../store/ingestion-steps.js';
import { toHttpDate, toSeconds } from '../time.js';

/**
 * The ingestion logs as RAGFlow's `GET /datasets/{id}/ingestions` answers them: one log per document run,
 * with Cairn's steps (each component's status, duration, output counts and error). Pure.
 */
export function ingestionLogs(rows: IngestionStepRow[], docs: Map<string, { name: string; run_seq: number; run: string }>) {
  const runs = new Map<string, IngestionStepRow[]>();
  for (const r of rows) {
    const key = `${r.document_id}-${r.run_seq}`;
    runs.set(key, [...(runs.get(key) ?? []), r]);
  }
  const logs = [...runs.entries()].map(([id, steps]) => {
    steps.sort((a, b) => a.step_index - b.step_index);
    const first = steps[0]!;
    const begin = Math.min(...steps.map((s) => s.begin_at));
    const ends = steps.map((s) => s.end_at ?? 0);
    return {
      id,
      document_id: first.document_id,
      document_name: docs.get(first.document_id)?.name ?? '',
      dataset_id: first.dataset_id,
      pipeline_id: first.pipeline_id,
      run_seq: first.run_seq,
      operation_status: runStatus(steps, docs.get(first.document_id), first.run_seq),
      process_begin_at: toHttpDate(begin),
      process_duration: Math.max(0, Math.max(...ends) - begin) / 1000,
      create_time: toSeconds(begin),
      steps: steps.map((s) => ({
        component_id: s.component_id,
        component_name: s.component_name,
        status: s.status,
        begin_at: toHttpDate(s.begin_at),
        duration: s.end_at === null ? null : (s.end_at - s.begin_at) / 1000,
        output: JSON.parse(s.output) as Record<string, unknown>,
        error: s.error,
      })),
    };
  });
  return logs.sort((a, b) => b.create_time - a.create_time || b.run_seq - a.run_seq);
}

/**
 * A run's status: the document's own for its current run (a run stopped between two steps has no cancelled
 * step); for an earlier run, from its steps: a failed or cancelled step ends it so, one still running (a run
 * whose worker was lost before it was replaced) keeps it RUNNING.
 */
function runStatus(steps: IngestionStepRow[], doc: { run_seq: number; run: string } | undefined, runSeq: number): string {
  if (doc && doc.run_seq === runSeq) return doc.run;
  for (const s of ['FAIL', 'CANCEL', 'RUNNING'] as const) if (steps.some((step) => step.status === s)) return s;
  return 'DONE';
}
