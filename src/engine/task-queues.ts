/** Workflow and activity names, task queues and workflow-id schemes, in one place. */
export const WORKFLOWS = {
  deleteDatasets: 'deleteDatasets',
  parseDocument: 'parseDocument',
  agentRun: 'agentRun',
  agentScheduledRun: 'agentScheduledRun',
  agentComponentDebug: 'agentComponentDebug',
  memoryExtraction: 'memoryExtraction',
  memoryExtractionBatches: 'memoryExtractionBatches',
  raptorIndex: 'raptorIndex',
  graphIndex: 'graphIndex',
} as const;

export type WorkflowName = (typeof WORKFLOWS)[keyof typeof WORKFLOWS];

/** The signal that hands a raw message to its memory's memoryExtractionBatches workflow. */
export const MEMORY_TURN_SIGNAL = 'memoryTurn';
export interface MemoryTurnSignal {
  messageId: number;
}

/**
 * What a worker process can be asked to do (`cairn worker --queues`, CAIRN_WORKER_QUEUES). Each role is
 * one task queue: the workflows started there and the activities they schedule run only on workers
 * polling it, so a chat turn never waits behind a long parse, and each kind of work scales apart.
 */
export const WORKER_ROLES = ['parse', 'agents', 'memory'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

/** The workflows each role runs; every workflow belongs to exactly one role. */
export const ROLE_WORKFLOWS: Record<WorkerRole, readonly WorkflowName[]> = {
  // Dataset indexes (RAPTOR, the knowledge graph) are dataset processing too: mostly waiting on models.
  parse: [WORKFLOWS.parseDocument, WORKFLOWS.deleteDatasets, WORKFLOWS.raptorIndex, WORKFLOWS.graphIndex],
  agents: [WORKFLOWS.agentRun, WORKFLOWS.agentScheduledRun, WORKFLOWS.agentComponentDebug],
  memory: [WORKFLOWS.memoryExtraction, WORKFLOWS.memoryExtractionBatches],
};

/**
 * The task queue of a role, derived from the deployment's CAIRN_TASK_QUEUE: parsing keeps the bare name
 * (the queue every workflow used before roles existed), the others get a suffix.
 */
export function roleTaskQueue(role: WorkerRole, taskQueue: string): string {
  return role === 'parse' ? taskQueue : `${taskQueue}-${role}`;
}

/**
 * Extraction (a file through a parser process, then chunking) polls a queue of its own beside the parse
 * queue, with as many slots as there are parser processes: files waiting for a parser never hold the
 * slots the embedding steps need. Parse workers poll both. Imported by workflow code: keep it pure.
 */
export function extractTaskQueue(parseQueue: string): string {
  return `${parseQueue}-extract`;
}

/** The role whose workers run `workflow`. */
export function roleOfWorkflow(workflow: WorkflowName): WorkerRole {
  const role = WORKER_ROLES.find((r) => ROLE_WORKFLOWS[r].includes(workflow));
  if (!role) throw new Error(`workflow ${workflow} belongs to no worker role`);
  return role;
}

/** The task queue `workflow` is started on. */
export function workflowTaskQueue(workflow: WorkflowName, taskQueue: string): string {
  return roleTaskQueue(roleOfWorkflow(workflow), taskQueue);
}

/** Agent runs poll their own queue, so a long parse never delays a chat turn. */
export function agentTaskQueue(taskQueue: string): string {
  return roleTaskQueue('agents', taskQueue);
}

/**
 * Reads a comma-separated list of roles (`parse,agents`); `source` names where it came from in the error
 * (`--queues`, `CAIRN_WORKER_QUEUES`). Refuses an empty list and unknown names, listing the valid ones.
 */
export function parseWorkerRoles(value: string, source: string): WorkerRole[] {
  const names = value.split(',').map((s) => s.trim()).filter(Boolean);
  const valid = WORKER_ROLES.join(', ');
  if (names.length === 0) throw new Error(`${source}: no worker role given; valid roles are ${valid}`);
  const unknown = names.filter((n) => !(WORKER_ROLES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`${source}: unknown worker role${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')}; valid roles are ${valid}`);
  // In the canonical order, once each: `agents,parse,agents` polls the same queues as `parse,agents`.
  return WORKER_ROLES.filter((r) => names.includes(r));
}

/** Workflow ids are derived from the objects they work on, so a second start finds the first run. */
/** A document's run as its workflow id names it: the document row's fields (pipeline_id: the run's pipeline, null for a chunk method). */
export interface IngestRunRef {
  id: string;
  dataset_id: string;
  run_seq: number;
  pipeline_id: string | null;
}

export const workflowIds = {
  deleteDatasets: (key: string) => `delete-datasets-${key}`,
  /** Runs started before ingestion runs named their dataset and pipeline (cancelled by this id as well). */
  parseDocument: (documentId: string, runSeq: number) => `parse-document-${documentId}-${runSeq}`,
  /** One id per run of a document, naming its dataset, the document, the run and what it ingests through. */
  ingestDocument: (run: IngestRunRef) => `ingest-${run.dataset_id}-${run.id}-${run.run_seq}-${run.pipeline_id ? `pipeline-${run.pipeline_id}` : 'chunk-method'}`,
  /** One id per session: Temporal itself refuses a second run of a session while one is open. */
  agentRun: (agentId: string, sessionId: string) => `agent-${agentId}-session-${sessionId}`,
  /** An agent's schedule (a Temporal Schedule), and the runs it starts (Temporal appends each run's time). */
  agentSchedule: (agentId: string, scheduleId: string) => `agent-${agentId}-schedule-${scheduleId}`,
  agentScheduledRun: (agentId: string, scheduleId: string) => `agent-${agentId}-schedule-${scheduleId}-run`,
  /** One id per debug run of a component (runKey is new each time). */
  agentComponentDebug: (agentId: string, runKey: string) => `agent-${agentId}-debug-${runKey}`,
  /** One id per raw memory message (message ids are never reused): runs started before extraction went in batches. */
  memoryExtraction: (memoryId: string, messageId: number) => `memory-${memoryId}-message-${messageId}`,
  /** One id per memory: its turns are extracted in batches by one workflow at a time. */
  memoryExtractionBatches: (memoryId: string) => `memory-${memoryId}-extraction`,
  /** One job of each type per dataset at a time. */
  datasetIndex: (type: string, datasetId: string) => `dataset-${type}-${datasetId}`,
};
