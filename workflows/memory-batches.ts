import {
  ActivityFailure, ApplicationFailure, allHandlersFinished, condition, continueAsNew, defineSignal, proxyActivities, proxyLocalActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { TurnEnd, TurnError, TurnExtraction, TurnItems, TurnReconciled, TurnStored } from '../src/services/memory-batches.js';
import { MEMORY_TURN_SIGNAL, type MemoryTurnSignal } from '../src/engine/task-queues.js';
import { MODEL_STEP_OPTIONS, QUICK_STEP_OPTIONS, nothingKeptMessage } from './memory-extraction.js';

/**
 * Reads and writes of the database: quick, retried until they succeed. Local activities (run by the worker that
 * runs the workflow, recorded in its history without a round trip through the server's activity queue): they
 * are a few milliseconds each, and every batch has two.
 */
const quick = proxyLocalActivities<Activities>(QUICK_STEP_OPTIONS);

/** Model calls: heartbeats and retries as memoryExtraction's (MODEL_STEP_OPTIONS). */
const modelSteps = proxyActivities<Activities>(MODEL_STEP_OPTIONS);

const turnSignal = defineSignal<[MemoryTurnSignal]>(MEMORY_TURN_SIGNAL);

/** How long the workflow waits for another turn once none is waiting, before it ends (the next turn starts it again). */
const IDLE = '5 seconds';
/** Turns per run: then the run continues as new with the turns still waiting, so its history stays small. */
const TURNS_PER_RUN = 400;

export interface MemoryBatchesInput {
  memoryId: string;
  /** Turns (raw message ids) handed over by the run before (continue-as-new), in their order. */
  waiting?: number[];
}

function reason(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
}

const isError = (r: TurnExtraction | TurnStored): r is TurnError => 'error' in r;
const failed = (r: TurnError): TurnEnd => ({ messageId: r.messageId, message: r.error, failed: true });

/**
 * Facts stay current for the stored turns with semantic items, in the batch's order. A failure after the
 * step's retries fails no turn (their items are stored): each one's message says why facts were not checked.
 */
async function reconcileFacts(memoryId: string, messageIds: number[]): Promise<Map<number, string>> {
  if (messageIds.length === 0) return new Map();
  try {
    const results = await modelSteps.reconcileMemoryBatchFacts({ memoryId, messageIds });
    const note = (r: TurnReconciled) => (r.error ? `; earlier facts not checked for updates: ${r.error}` : r.replaced ? `; ${r.replaced} earlier fact(s) replaced` : '');
    return new Map(results.map((r) => [r.messageId, note(r)]));
  } catch (err) {
    return new Map(messageIds.map((id) => [id, `; earlier facts not checked for updates: ${reason(err)}`]));
  }
}

/** Extracts, stores and reconciles one batch; returns each turn's end. A failure of the whole batch fails each of its turns with the reason. */
async function runBatch(memoryId: string, batch: number[]): Promise<TurnEnd[]> {
  let extracted: TurnExtraction[];
  let stored: TurnStored[];
  try {
    extracted = await modelSteps.extractMemoryBatch({ memoryId, messageIds: batch });
    const ok = extracted.filter((t): t is TurnItems => !isError(t));
    stored = ok.length ? await modelSteps.storeMemoryBatch({ memoryId, turns: ok.map(({ messageId, items }) => ({ messageId, items })) }) : [];
  } catch (err) {
    const message = reason(err);
    return batch.map((messageId) => ({ messageId, message, failed: true }));
  }
  const byId = new Map(extracted.filter((t): t is TurnItems => !isError(t)).map((t) => [t.messageId, t]));
  const withFacts = stored.filter((s) => !isError(s) && byId.get(s.messageId)!.items.some((i) => i.type === 'semantic')).map((s) => s.messageId);
  const facts = await reconcileFacts(memoryId, withFacts);
  const ends: TurnEnd[] = extracted.filter(isError).map(failed);
  for (const s of stored) {
    if (isError(s)) {
      ends.push(failed(s));
      continue;
    }
    const { items, note } = byId.get(s.messageId)!;
    const more = facts.get(s.messageId) ?? '';
    const freed = s.evicted ? `; ${s.evicted} older message(s) removed by FIFO to make room` : '';
    const dropped = note ? `; ${note}` : '';
    const message = items.length === 0 ? nothingKeptMessage(note) : s.alreadyStored ? `Done: ${items.length} item(s) stored${more}` : `Done: ${s.stored} item(s) stored${freed}${dropped}${more}`;
    ends.push({ messageId: s.messageId, message });
  }
  return ends;
}

/**
 * The extraction of one memory's turns, in batches: each raw message added to the memory is signalled here
 * (signal-with-start on the memory's id); the turns that arrive while a batch is with the model wait and go
 * into the next one, up to CAIRN_MEMORY_EXTRACTION_BATCH per model call (the worker decides, in
 * beginMemoryBatch). Each turn keeps its own task (progress, message, failure reason), its own items and its
 * own exactly-once marker (see MemoryBatchExtractor). Ends IDLE after the last turn; a signal that arrives as
 * it ends is not lost (Temporal refuses the completion and replays with the signal).
 */
export async function memoryExtractionBatches(input: MemoryBatchesInput): Promise<{ turns: number }> {
  const waiting: number[] = [...(input.waiting ?? [])];
  const seen = new Set(waiting);
  setHandler(turnSignal, ({ messageId }) => {
    if (seen.has(messageId)) return;
    seen.add(messageId);
    waiting.push(messageId);
  });
  let turns = 0;
  for (;;) {
    await condition(() => waiting.length > 0, IDLE);
    if (waiting.length === 0) return { turns };
    const { batch, settled } = await quick.beginMemoryBatch({ memoryId: input.memoryId, messageIds: [...waiting] });
    const taken = new Set([...batch, ...settled]);
    waiting.splice(0, waiting.length, ...waiting.filter((id) => !taken.has(id)));
    if (batch.length) await quick.endMemoryTurns({ memoryId: input.memoryId, ends: await runBatch(input.memoryId, batch) });
    turns += taken.size;
    if (turns >= TURNS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return await continueAsNew<typeof memoryExtractionBatches>({ memoryId: input.memoryId, waiting });
    }
  }
}
