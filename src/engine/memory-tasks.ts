import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WORKFLOWS, workflowIds, workflowTaskQueue } from './task-queues.js';
import { startWorkflow } from './workflow-starts.js';
import type { MemoryExtractionInput, MemoryTasks } from '../memories/types.js';

/**
 * Starts memoryExtraction workflows on the memory role's task queue, one per (memory, raw message); the
 * id is derived from both, so a second start of the same message's extraction finds the first.
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
    try {
      await startWorkflow(this.client(), WORKFLOWS.memoryExtraction, {
        taskQueue: workflowTaskQueue(WORKFLOWS.memoryExtraction, this.taskQueue),
        workflowId: workflowIds.memoryExtraction(input.memoryId, input.messageId),
        args: [input],
        // A message is extracted once: starting it again after it finished is refused as well.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}

/** For code running inside activities (e.g. an agent's Message component): uses the worker's client. */
export function activityMemoryTasks(taskQueue: string): MemoryTasks {
  return new TemporalMemoryTasks(() => Context.current().client, taskQueue);
}
