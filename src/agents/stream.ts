import { RECORD_ONLY_EVENTS, RUN_END, type RunEvent, type RunEvents } from '../events/types.js';

/**
 * Reads a run's event log for a caller: in order, until the run's end. A component whose activity ran
 * again (its worker died, or the component retried) streams its text anew; only the part beyond what
 * the caller already got is passed on, so nobody sees a sentence twice. When the log goes quiet and
 * the run's workflow is no longer open, the reader stops with an error instead of waiting forever.
 */
export async function* followAgentRun(
  bus: RunEvents,
  runKey: string,
  runOpen: () => Promise<boolean>,
  signal?: AbortSignal,
  pollMs = 25,
  quietCheckMs = 3000,
): AsyncGenerator<RunEvent> {
  const streams = new Map<string, { attempt: number; position: number; sent: number }>();
  let seq = 0;
  let quietSince = Date.now();
  while (!signal?.aborted) {
    const batch = await bus.read(runKey, seq);
    for (const { seq: s, event } of batch) {
      seq = s;
      if (event.event === RUN_END) return;
      if (RECORD_ONLY_EVENTS.has(event.event)) continue;
      const forwarded = dedupe(event, streams);
      if (forwarded) yield forwarded;
    }
    if (batch.length) {
      quietSince = Date.now();
      continue;
    }
    if (Date.now() - quietSince > quietCheckMs) {
      quietSince = Date.now();
      if (!(await runOpen())) {
        const last = await bus.read(runKey, seq);
        if (!last.length) throw new Error('the run ended without a result; its workflow history in the Temporal UI tells why');
        continue;
      }
    }
    await bus.wait(runKey, pollMs);
  }
}

function dedupe(event: RunEvent, streams: Map<string, { attempt: number; position: number; sent: number }>): RunEvent | undefined {
  if (event.event !== 'message' || !event.stream) return event;
  const data = event.data as { content?: string };
  const text = data.content ?? '';
  let s = streams.get(event.stream);
  if (!s) streams.set(event.stream, (s = { attempt: event.attempt ?? 0, position: 0, sent: 0 }));
  if ((event.attempt ?? 0) !== s.attempt) {
    s.attempt = event.attempt ?? 0;
    s.position = 0;
  }
  const start = s.position;
  s.position += text.length;
  if (!text) return start >= s.sent ? event : undefined;
  if (s.position <= s.sent) return undefined;
  const fresh = text.slice(Math.max(0, s.sent - start));
  s.sent = s.position;
  return { ...event, data: { ...data, content: fresh } };
}

/**
 * The text a run streamed so far, as its caller received it (each retried component counted once, reasoning
 * in `<think>` tags as the non-stream answer shows it): the answer an interrupted turn keeps.
 */
export async function streamedSoFar(bus: RunEvents, runKey: string): Promise<string> {
  const streams = new Map<string, { attempt: number; position: number; sent: number }>();
  let text = '';
  let seq = 0;
  for (;;) {
    const batch = await bus.read(runKey, seq);
    if (!batch.length) return text;
    for (const { seq: s, event } of batch) {
      seq = s;
      if (event.event !== 'message') continue;
      const forwarded = dedupe(event, streams);
      const data = (forwarded?.data ?? {}) as { content?: string; start_to_think?: boolean; end_to_think?: boolean };
      if (data.start_to_think) text += '<think>';
      else if (data.end_to_think) text += '</think>';
      else text += data.content ?? '';
    }
  }
}
