import type { Client, WorkflowHandleWithStartDetails, WorkflowOptions, WorkflowStartOptions } from '@temporalio/client';
import type * as workflows from '../../workflows/index.js';
import type { WorkflowName } from './task-queues.js';

/**
 * Typed workflow starts. A start names the workflow (a WORKFLOWS name) and its arguments are checked
 * against that workflow function's parameters, so a service passing the wrong input is a compile error.
 *
 * The functions come in with `import type` only: the import is erased when compiled, so the API process
 * never loads workflow code (that is bundled apart for the workers, see bundle-workflows.ts). Passing the
 * function itself to `client.workflow.start` would load it, and with it @temporalio/workflow, into the
 * server. This is Temporal's `client.workflow.start<typeof parseDocument>('parseDocument', ...)`, with the
 * type parameter picked by the name, so the name and the type cannot disagree either.
 */
export type Workflows = typeof workflows;

/** The arguments of the workflow named `N`, from its function in workflows/. */
export type WorkflowArgs<N extends WorkflowName> = Parameters<Workflows[N]>;

/** The single input of the workflow named `N` (every Cairn workflow takes one). */
export type WorkflowInput<N extends WorkflowName> = WorkflowArgs<N>[0];

/** `options` without the arguments, which are checked against the workflow named `N`. */
export type StartOptions<N extends WorkflowName> = WorkflowOptions & { args: WorkflowArgs<N> };

/** Starts the workflow named `workflow` (by name: see above); throws WorkflowExecutionAlreadyStartedError as Temporal does. */
export function startWorkflow<N extends WorkflowName>(client: Client, workflow: N, options: StartOptions<N>): Promise<WorkflowHandleWithStartDetails<Workflows[N]>> {
  // `args` is already checked against the workflow's parameters; Temporal's conditional options type
  // cannot be resolved for a generic `N`, hence the cast.
  return client.workflow.start<Workflows[N]>(workflow, options as WorkflowStartOptions<Workflows[N]>);
}
