import { createHash } from 'node:crypto';
import { Client, Connection, WorkflowExecutionAlreadyStartedError, isGrpcServiceError, type ConnectionLike } from '@temporalio/client';
import { ServiceUnavailable } from '../errors.js';
import { WORKFLOWS, agentTaskQueue, workflowIds, workflowTaskQueue, type IngestRunRef, type WorkflowName } from './task-queues.js';
import { startWorkflow, type WorkflowArgs, type Workflows } from './workflow-starts.js';
import { AGENT_TURN_SIGNAL, type AgentRunInput, type AgentTurnSignal, type ComponentResult, type OpenAgentRun } from '../agents/run-types.js';
import { recordAgentTurnStart } from '../observability/agent-start-metrics.js';
import type { ComponentDebugInput } from '../agents/component-debug.js';
import type { DatasetCleanup } from '../services/datasets.js';
import type { ParseControl, ParseLabels } from '../services/documents.js';
import type { DatasetIndexControl, DatasetIndexInput } from '../services/dataset-indexes.js';
import type { DatasetIndexType } from '../store/enrichment.js';
import type { PipelineRun } from '../pipelines/run-types.js';

/** gRPC codes of a Temporal that is down or out of reach (not of a request it refused). */
const UNREACHABLE: ReadonlySet<number> = new Set([14 /* UNAVAILABLE */, 4 /* DEADLINE_EXCEEDED */]);
/** A restarted dev server answers within seconds. */
const TEMPORAL_RETRY_AFTER_S = 5;

/** The ids a parse run's workflow may have: `ingest-…`, or `parse-document-…` for a run started before those. */
const parseWorkflowIds = (run: IngestRunRef) => [workflowIds.ingestDocument(run), workflowIds.parseDocument(run.id, run.run_seq)];

const DATASET_INDEX_WORKFLOWS = { raptor: WORKFLOWS.raptorIndex, graph: WORKFLOWS.graphIndex } as const satisfies Record<DatasetIndexType, WorkflowName>;

/** Starts and controls Cairn's workflows, each on the task queue of the worker role that runs it. */
export class WorkflowClient implements DatasetCleanup, ParseControl, DatasetIndexControl {
  /** Starts agent turns eagerly: set when this process also runs the agents' workflow worker. */
  private agentStarter?: Client;

  private constructor(
    readonly client: Client,
    private readonly connection: Connection,
    private readonly taskQueue: string,
  ) {}

  static async connect(address: string, namespace: string, taskQueue: string): Promise<WorkflowClient> {
    const connection = await Connection.connect({ address });
    return new WorkflowClient(new Client({ connection, namespace }), connection, taskQueue);
  }

  /** Over a client already connected (inside an activity, the worker's own): `close` and `ping` are its owner's. */
  static overClient(client: Client, taskQueue: string): WorkflowClient {
    return new WorkflowClient(client, client.connection as Connection, taskQueue);
  }

  /**
   * Agent turns start eagerly on the worker in this process: the start call brings back the run's first
   * workflow task, so the turn skips a round trip through the task queue before its first component.
   * `connection` is the one the agents' workflow worker polls on (Temporal hands an eager task only to a
   * worker on the client's own connection).
   */
  startAgentRunsEagerly(connection: ConnectionLike): void {
    this.agentStarter = new Client({ connection, namespace: this.client.options.namespace });
  }

  async startDeleteDatasets(datasetIds: string[]): Promise<void> {
    const key = createHash('sha1').update([...datasetIds].sort().join(',')).digest('hex');
    await this.startOnce(WORKFLOWS.deleteDatasets, workflowIds.deleteDatasets(key), [{ datasetIds }]);
  }

  /** The memo carries the file's and the dataset's names: the Temporal UI shows them beside the ids of the input. */
  async startParse(run: IngestRunRef, labels: ParseLabels, pipeline?: PipelineRun): Promise<void> {
    const input = { documentId: run.id, datasetId: run.dataset_id, runSeq: run.run_seq, ...(pipeline ? { pipeline } : {}) };
    await this.reachingTemporal('start parsing', () =>
      this.startOnce(WORKFLOWS.parseDocument, workflowIds.ingestDocument(run), [input], { ...labels, dataset_id: run.dataset_id }),
    );
  }

  /**
   * Requests cancellation; the workflow marks the document CANCEL and removes partial chunks. A run started
   * before runs were named `ingest-…` is found by its old id. False when no workflow of the run is open (none
   * was started, or it has closed): nobody will mark the document, the caller must.
   */
  async cancelParse(run: IngestRunRef): Promise<boolean> {
    for (const id of parseWorkflowIds(run)) {
      const handle = this.client.workflow.getHandle(id);
      try {
        const cancelled = await this.reachingTemporal('stop parsing', async () => {
          if ((await handle.describe()).status.name !== 'RUNNING') return false;
          await handle.cancel();
          return true;
        });
        if (cancelled) return true;
      } catch (err) {
        if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
      }
    }
    return false;
  }

  /** Whether a workflow of the run is open (a document RUNNING without one was left by a crash between its two writes). */
  async parseOpen(run: IngestRunRef): Promise<boolean> {
    for (const id of parseWorkflowIds(run)) {
      try {
        const { status } = await this.reachingTemporal('check parsing', () => this.client.workflow.getHandle(id).describe());
        if (status.name === 'RUNNING') return true;
      } catch (err) {
        if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
      }
    }
    return false;
  }

  /** Starts a dataset's RAPTOR or graph job; false when one of the type is still running for the dataset. */
  async startDatasetIndex(type: DatasetIndexType, input: DatasetIndexInput): Promise<boolean> {
    return this.startOnce(DATASET_INDEX_WORKFLOWS[type], workflowIds.datasetIndex(type, input.datasetId), [input]);
  }

  /** Requests cancellation of a dataset's running job; the workflow records the task as cancelled. */
  async cancelDatasetIndex(type: DatasetIndexType, datasetId: string): Promise<void> {
    try {
      await this.client.workflow.getHandle(workflowIds.datasetIndex(type, datasetId)).cancel();
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
  }

  /** Waits until the dataset's job of the type has closed (after a cancel); returns at once when none runs. */
  async waitDatasetIndex(type: DatasetIndexType, datasetId: string): Promise<void> {
    try {
      await this.client.workflow.getHandle(workflowIds.datasetIndex(type, datasetId)).result();
    } catch {
      // Cancelled, failed or not found: closed either way.
    }
  }

  /** Starts a turn of an agent session; false when a turn of that session is still running. */
  async startAgentRun(input: AgentRunInput): Promise<boolean> {
    try {
      const started = await startWorkflow(this.agentStarter ?? this.client, WORKFLOWS.agentRun, {
        taskQueue: workflowTaskQueue(WORKFLOWS.agentRun, this.taskQueue),
        workflowId: workflowIds.agentRun(input.agentId, input.sessionId),
        args: [input],
        memo: { runKey: input.runKey },
        requestEagerStart: this.agentStarter !== undefined,
      });
      recordAgentTurnStart(started.eagerlyStarted);
      return true;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw err;
    }
  }

  /** Runs one component of an agent by itself (the debug route) and waits for its outputs. */
  async runAgentComponent(input: ComponentDebugInput): Promise<ComponentResult> {
    const handle = await startWorkflow(this.client, WORKFLOWS.agentComponentDebug, {
      taskQueue: workflowTaskQueue(WORKFLOWS.agentComponentDebug, this.taskQueue),
      workflowId: workflowIds.agentComponentDebug(input.agentId, input.runKey),
      args: [input],
      memo: { componentId: input.componentId },
    });
    return handle.result();
  }

  /**
   * Submits a turn with a multitask strategy: Temporal's signal-with-start starts the session's workflow
   * with it when none runs, and otherwise hands it to the running one, which queues it (enqueue) or stops
   * its own turn first (interrupt, rollback). Atomic on the server: two callers cannot both start a run.
   */
  async submitAgentTurn(input: AgentRunInput, strategy: AgentTurnSignal['strategy']): Promise<void> {
    const signal: AgentTurnSignal = { turn: input, strategy };
    await this.client.workflow.signalWithStart<Workflows['agentRun'], [AgentTurnSignal]>(WORKFLOWS.agentRun, {
      taskQueue: workflowTaskQueue(WORKFLOWS.agentRun, this.taskQueue),
      workflowId: workflowIds.agentRun(input.agentId, input.sessionId),
      args: [input],
      memo: { runKey: input.runKey },
      signal: AGENT_TURN_SIGNAL,
      signalArgs: [signal],
    });
  }

  /** Cancels the session's running turn; false when none is running. */
  async cancelAgentRun(agentId: string, sessionId: string): Promise<boolean> {
    const handle = this.client.workflow.getHandle(workflowIds.agentRun(agentId, sessionId));
    try {
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') return false;
      await handle.cancel();
      return true;
    } catch (err) {
      if ((err as Error).name === 'WorkflowNotFoundError') return false;
      throw err;
    }
  }

  /** The session's open turn, if a turn workflow is open: its key (the memo) and the workflow run that runs it. */
  async openAgentRun(agentId: string, sessionId: string): Promise<OpenAgentRun | undefined> {
    try {
      const d = await this.client.workflow.getHandle(workflowIds.agentRun(agentId, sessionId)).describe();
      return d.status.name === 'RUNNING' ? { runKey: String(d.memo?.runKey ?? ''), runId: d.runId } : undefined;
    } catch (err) {
      if ((err as Error).name === 'WorkflowNotFoundError') return undefined;
      throw err;
    }
  }

  /**
   * Waits (at most `ms`) until the session's workflow no longer runs `runId`: it closed, or continued as new
   * with a queued turn. True when it moved on. Polls `describe` (a few milliseconds each) rather than
   * long-polling the run's result, which would go on polling after the caller gave up.
   */
  async waitAgentRunMovedOn(agentId: string, sessionId: string, runId: string, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
      const open = await this.openAgentRun(agentId, sessionId);
      if (open?.runId !== runId) return true;
      if (Date.now() + pause > deadline) return false;
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  /** Whether the session's latest turn workflow is still open (for readers waiting on its events). */
  async agentRunOpen(agentId: string, sessionId: string): Promise<boolean> {
    try {
      const { status } = await this.client.workflow.getHandle(workflowIds.agentRun(agentId, sessionId)).describe();
      return status.name === 'RUNNING';
    } catch (err) {
      if ((err as Error).name === 'WorkflowNotFoundError') return false;
      throw err;
    }
  }

  /**
   * Agent runs of this deployment (its agent task queue) by execution status, from Temporal's visibility
   * store in one query: Running, and the closed ones still within the namespace's retention.
   */
  async countAgentRuns(): Promise<Map<string, number>> {
    return this.countByStatus(WORKFLOWS.agentRun, agentTaskQueue(this.taskQueue));
  }

  /** Workflows of a type on a task queue by execution status, from the visibility store in one query. */
  private async countByStatus(type: WorkflowName, taskQueue: string): Promise<Map<string, number>> {
    const queue = taskQueue.replace(/'/g, "\\'");
    const { groups } = await this.client.workflow.count(`WorkflowType = '${type}' AND TaskQueue = '${queue}' GROUP BY ExecutionStatus`);
    const counts = new Map<string, number>();
    for (const g of groups) counts.set(String([g.groupValues[0]].flat()[0]), g.count);
    return counts;
  }

  /**
   * Starts a workflow unless one with the same id is already running; `memo` is shown in the Temporal UI.
   * `args` are those of the workflow named `type` (workflow-starts.ts): a wrong input does not compile.
   */
  async startOnce<N extends WorkflowName>(type: N, workflowId: string, args: WorkflowArgs<N>, memo?: Record<string, string>): Promise<boolean> {
    try {
      await startWorkflow(this.client, type, { taskQueue: workflowTaskQueue(type, this.taskQueue), workflowId, args, ...(memo ? { memo } : {}) });
      return true;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw err;
    }
  }

  /**
   * Runs a call to Temporal; a Temporal that cannot be reached (connection refused or lost, no answer in
   * time) becomes a 503 naming it, with Retry-After: the fault is not the caller's, and a retry may work.
   */
  private async reachingTemporal<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      const grpc = [err, (err as Error).cause].find(isGrpcServiceError);
      if (!grpc || !UNREACHABLE.has(grpc.code)) throw err;
      throw new ServiceUnavailable(`Could not ${what}: the workflow service (Temporal at ${this.connection.options.address}) cannot be reached (${grpc.details || grpc.message}); nothing was changed, try again later`, TEMPORAL_RETRY_AFTER_S);
    }
  }

  async ping(): Promise<void> {
    await this.connection.healthService.check({});
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
