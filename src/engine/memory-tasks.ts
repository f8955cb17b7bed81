import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { MEMORY_TURN_SIGNAL, WORKFLOWS, workflowIds, workflowTaskQueue, type MemoryTurnSignal } from './task-queues.js';
import type { Workflows } from './workflow-starts.js';
import type { MemoryExtractionInput, MemoryTasks } from '../memories/types.js';

/**
 * Hands raw messages to their memory's memoryExtractionBatches workflow on the memory role's task queue:
 * Temporal's signal-with-start starts it when none runs and otherwise signals the running one, atomically, so
 * two API processes adding turns to one memory at once reach the same workflow.
 */
export class TemporalMemoryTasks implements MemoryTasks {
  /**
   * `client` is called at each start: inside an activity it is the worker's own client (see
   * activityMemoryTasks). `taskQueue` is the deployment's CAIRN_TASK_QUEUE; the memory queue derives from it.
   */
  constructor(
    private readonly client: () => Client,
    private readonly taskQueue: string,
  ) {}

  async startExtraction(input: MemoryExtractionInput): Promise<void> {
    await this.client().workflow.signalWithStart<Workflows['memoryExtractionBatches'], [MemoryTurnSignal]>(WORKFLOWS.memoryExtractionBatches, {
      taskQueue: workflowTaskQueue(WORKFLOWS.memoryExtractionBatches, this.taskQueue),
      workflowId: workflowIds.memoryExtractionBatches(input.memoryId),
      args: [{ memoryId: input.memoryId }],
      signal: MEMORY_TURN_SIGNAL,
      signalArgs: [{ messageId: input.messageId }],
    });
  }
}

/** For code running inside activities (e.g. an agent's Message component): uses the worker's client. */
export function activityMemoryTasks(taskQueue: string): MemoryTasks {
  return new TemporalMemoryTasks(() => Context.current().client, taskQueue);
}
