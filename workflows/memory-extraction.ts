import { ActivityFailure, ApplicationFailure, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { MemoryExtractionInput } from '../src/memories/types.js';
import type { ExtractedItem } from '../src/memories/extraction.js';

/** Reads and writes of the database: quick, retried until they succeed (memoryExtractionBatches uses them too). */
export const QUICK_STEP_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
} as const;

/**
 * Model calls: heartbeats every second, so a killed worker is noticed after 5 s and the step runs again
 * on another; a failing model call is retried with backoff, four attempts in all.
 */
export const MODEL_STEP_OPTIONS = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '15 seconds', maximumAttempts: 4 },
} as const;

const quick = proxyActivities<Activities>(QUICK_STEP_OPTIONS);
const modelSteps = proxyActivities<Activities>(MODEL_STEP_OPTIONS);

export type MemoryExtractionOutcome =
  | { status: 'done'; stored: number; evicted: number }
  | { status: 'raw-only' }
  | { status: 'gone' };

/** The task's closing message when no item is kept: why (`note`: what the extraction step dropped). */
export function nothingKeptMessage(note: string): string {
  return `Done: nothing to remember in this turn (${note ? `the model's items were ${note.replace(/^dropped /, 'dropped: ')}` : 'the model found no items in it'})`;
}

/**
 * Retires the facts the new semantic items update or contradict; the task's message says how many. The items are
 * stored by then, so a failure here (the model unreachable after every attempt, an unreadable answer) does not fail
 * the extraction: the earlier facts stay current and the message says why they were not checked.
 */
async function reconcileFacts(input: MemoryExtractionInput): Promise<string> {
  try {
    const { replaced } = await modelSteps.reconcileMemoryFacts(input);
    return replaced ? `; ${replaced} earlier fact(s) replaced` : '';
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    return `; earlier facts not checked for updates: ${cause instanceof Error ? cause.message : String(cause)}`;
  }
}

/** The failure type of an extraction that failed: its workflow ends FAILED (the Temporal UI, /metrics). */
export const EXTRACTION_FAILED = 'MemoryExtractionFailed';

/**
 * The extraction of one raw memory message: ask the memory's chat model for semantic / episodic /
 * procedural items, embed them and store them linked to the raw message. Progress and the failure
 * reason are written to the message's task. The items are part of this workflow's history once the
 * model has answered, and the store step is exactly-once (see MemoryExtractor.storeItems), so a retried
 * or restarted step never stores an item twice. A failure is recorded on the task, then fails the workflow.
 */
export async function memoryExtraction(input: MemoryExtractionInput): Promise<MemoryExtractionOutcome> {
  try {
    const begun = await quick.beginMemoryTask(input);
    if (begun === 'gone') return { status: 'gone' };
    if (begun === 'done') return { status: 'raw-only' };
    const extracted: { items: ExtractedItem[]; note: string } | ExtractedItem[] = await modelSteps.extractMemoryItems(input);
    // Histories written before items came with a note hold the bare list.
    const { items, note } = Array.isArray(extracted) ? { items: extracted, note: '' } : extracted;
    const { stored, evicted, alreadyStored } = await modelSteps.storeMemoryItems({ ...input, items });
    const freed = evicted ? `; ${evicted} older message(s) removed by FIFO to make room` : '';
    const dropped = note ? `; ${note}` : '';
    // Runs started before facts were reconciled replay without the step (patched).
    const facts = items.some((i) => i.type === 'semantic') && patched('memory-fact-updates') ? await reconcileFacts(input) : '';
    const message = items.length === 0 ? nothingKeptMessage(note) : alreadyStored ? `Done: ${items.length} item(s) stored${facts}` : `Done: ${stored} item(s) stored${freed}${dropped}${facts}`;
    await quick.finishMemoryTask({ ...input, message });
    return { status: 'done', stored, evicted };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const message = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
    await quick.failMemoryTask({ ...input, message });
    throw ApplicationFailure.nonRetryable(`Memory extraction failed: ${message}`, EXTRACTION_FAILED);
  }
}
