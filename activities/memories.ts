import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from './deps.js';
import type { MemoryExtractionInput } from '../src/memories/types.js';
import type { ExtractedItem } from '../src/memories/extraction.js';
import type { CleanedExtraction } from '../src/memories/structured.js';
import type { BeginOutcome, ReconcileOutcome } from '../src/services/memory-extractor.js';
import { MemoryBatchExtractor, type BatchStart, type TurnEnd, type TurnExtraction, type TurnReconciled, type TurnStored } from '../src/services/memory-batches.js';
import { ModelError } from '../src/models/types.js';

/** Failures that another attempt cannot fix: the task fails at once with the reason. */
const FINAL = new Set(['InvalidExtractionError', 'MemoryFullError', 'InvalidModelIdError', 'SourceGoneError']);

function asFailure(err: unknown): unknown {
  if (err instanceof ModelError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, 'ModelConfigurationError');
  if (err instanceof Error && FINAL.has(err.name)) return ApplicationFailure.nonRetryable(err.message, err.name);
  return err;
}

/** Heartbeats every second while a model call runs, so a dead worker is noticed within the heartbeat timeout. */
async function withHeartbeats<T>(run: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => heartbeat(), 1000);
  try {
    return await run();
  } catch (err) {
    throw asFailure(err);
  } finally {
    clearInterval(timer);
  }
}

/** One memory's turns in the memoryExtractionBatches workflow. */
export interface MemoryBatchInput {
  memoryId: string;
  messageIds: number[];
}

/**
 * The steps of the memoryExtractionBatches workflow and of the one-turn memoryExtraction workflow that runs
 * on for histories started before batches (thin: the work is in MemoryBatchExtractor and MemoryExtractor).
 */
export function memoryActivities({ store, memories, models, memoryExtractionBatch }: ActivityDeps) {
  const extractor = new MemoryBatchExtractor(store, memories, models, memoryExtractionBatch);
  return {
    beginMemoryBatch(input: MemoryBatchInput): Promise<BatchStart> {
      return extractor.beginBatch(input.memoryId, input.messageIds);
    },

    extractMemoryBatch(input: MemoryBatchInput): Promise<TurnExtraction[]> {
      const ctx = Context.current();
      return withHeartbeats(() => extractor.extractBatch(input.memoryId, input.messageIds, { attempt: ctx.info.attempt, signal: ctx.cancellationSignal }));
    },

    storeMemoryBatch(input: { memoryId: string; turns: { messageId: number; items: ExtractedItem[] }[] }): Promise<TurnStored[]> {
      return withHeartbeats(() => extractor.storeBatch(input.memoryId, input.turns));
    },

    reconcileMemoryBatchFacts(input: MemoryBatchInput): Promise<TurnReconciled[]> {
      const ctx = Context.current();
      return withHeartbeats(() => extractor.reconcileBatch(input.memoryId, input.messageIds, { signal: ctx.cancellationSignal }));
    },

    endMemoryTurns(input: { memoryId: string; ends: TurnEnd[] }): Promise<void> {
      return extractor.endTurns(input.memoryId, input.ends);
    },

    beginMemoryTask(input: MemoryExtractionInput): Promise<BeginOutcome> {
      return extractor.begin(input.memoryId, input.messageId);
    },

    extractMemoryItems(input: MemoryExtractionInput): Promise<CleanedExtraction> {
      const ctx = Context.current();
      return withHeartbeats(() => extractor.extract(input.memoryId, input.messageId, { attempt: ctx.info.attempt, signal: ctx.cancellationSignal }));
    },

    storeMemoryItems(input: MemoryExtractionInput & { items: ExtractedItem[] }): Promise<{ stored: number; evicted: number; alreadyStored: boolean }> {
      return withHeartbeats(() => extractor.storeItems(input.memoryId, input.messageId, input.items));
    },

    reconcileMemoryFacts(input: MemoryExtractionInput): Promise<ReconcileOutcome> {
      const ctx = Context.current();
      return withHeartbeats(() => extractor.reconcileFacts(input.memoryId, input.messageId, { signal: ctx.cancellationSignal }));
    },

    finishMemoryTask(input: MemoryExtractionInput & { message: string }): Promise<void> {
      return extractor.finish(input.memoryId, input.messageId, input.message);
    },

    failMemoryTask(input: MemoryExtractionInput & { message: string }): Promise<void> {
      return extractor.fail(input.memoryId, input.messageId, input.message);
    },
  };
}
