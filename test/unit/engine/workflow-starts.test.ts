import assert from 'node:assert/strict';
import * as esbuild from 'esbuild';
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WORKFLOWS, workflowTaskQueue } from '../../../src/engine/task-queues.js';
import { WorkflowClient } from '../../../src/engine/workflow-client.js';
import { startWorkflow, type WorkflowInput } from '../../../src/engine/workflow-starts.js';
import type { AgentRunInput } from '../../../src/agents/run-types.js';
import type { DatasetIndexInput } from '../../../src/services/dataset-indexes.js';
import type { MemoryExtractionInput } from '../../../src/memories/types.js';
import type { ParseInput } from '../../../workflows/parse-document.js';
import type { DeleteDatasetsInput } from '../../../workflows/delete-datasets.js';

const root = path.resolve(import.meta.dirname, '..', '..', '..');

type Started = { name: string; options: Record<string, unknown> };

/** A Client whose workflow.start records what it was given; `refuse` makes it answer "already started". */
function fakeClient(started: Started[], refuse = false): Client {
  const workflow = {
    async start(name: string, options: Record<string, unknown>) {
      if (refuse) throw new WorkflowExecutionAlreadyStartedError('already started', String(options.workflowId), name);
      started.push({ name, options });
      return {};
    },
  };
  return { workflow } as unknown as Client;
}

/** A WorkflowClient over a fake Client (its constructor is private: connect() needs a server). */
function fakeWorkflowClient(client: Client, taskQueue: string): WorkflowClient {
  return Object.assign(Object.create(WorkflowClient.prototype) as WorkflowClient, { client, taskQueue });
}

/** Types that must be equal: `Equal<A, B>` is `true` only then. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const equal = <T extends true>(): T | undefined => undefined;

/**
 * Checked by `tsc --noEmit`, never run: each `@ts-expect-error` line must fail to compile (tsc reports
 * an unused one), so a start whose arguments do not match its workflow's parameters is a compile error.
 */
export function typeChecks(client: Client, wc: WorkflowClient): void {
  const taskQueue = 'q';
  const workflowId = 'id';
  const parse: ParseInput = { documentId: 'd', datasetId: 's', runSeq: 1 };

  // The input types are those of the workflow functions.
  equal<Equal<WorkflowInput<'parseDocument'>, ParseInput>>();
  equal<Equal<WorkflowInput<'deleteDatasets'>, DeleteDatasetsInput>>();
  equal<Equal<WorkflowInput<'agentRun'>, AgentRunInput>>();
  equal<Equal<WorkflowInput<'memoryExtraction'>, MemoryExtractionInput>>();
  equal<Equal<WorkflowInput<'raptorIndex'>, DatasetIndexInput>>();
  equal<Equal<WorkflowInput<'graphIndex'>, DatasetIndexInput>>();

  void startWorkflow(client, WORKFLOWS.parseDocument, { taskQueue, workflowId, args: [parse] });
  // @ts-expect-error a field of the wrong type
  void startWorkflow(client, WORKFLOWS.parseDocument, { taskQueue, workflowId, args: [{ documentId: 'd', datasetId: 's', runSeq: '1' }] });
  // @ts-expect-error a field missing
  void startWorkflow(client, WORKFLOWS.parseDocument, { taskQueue, workflowId, args: [{ documentId: 'd', runSeq: 1 }] });
  // @ts-expect-error another workflow's input
  void startWorkflow(client, WORKFLOWS.parseDocument, { taskQueue, workflowId, args: [{ memoryId: 'm', messageId: 1 }] });
  // @ts-expect-error no input
  void startWorkflow(client, WORKFLOWS.memoryExtraction, { taskQueue, workflowId, args: [] });
  // @ts-expect-error one argument too many
  void startWorkflow(client, WORKFLOWS.raptorIndex, { taskQueue, workflowId, args: [{ datasetId: 's', tenantId: 't', taskId: 'k' }, 1] });
  // @ts-expect-error args left out
  void startWorkflow(client, WORKFLOWS.graphIndex, { taskQueue, workflowId });
  // @ts-expect-error a name no workflow has
  void startWorkflow(client, 'parseDocuments', { taskQueue, workflowId, args: [parse] });

  void wc.startOnce(WORKFLOWS.deleteDatasets, workflowId, [{ datasetIds: ['s'] }]);
  // @ts-expect-error the ids as one string
  void wc.startOnce(WORKFLOWS.deleteDatasets, workflowId, [{ datasetIds: 's' }]);
  // @ts-expect-error untyped arguments are no longer taken
  void wc.startOnce(WORKFLOWS.parseDocument, workflowId, [parse] as unknown[]);
  // @ts-expect-error a workflow name as a plain string
  void wc.startOnce('parseDocument' as string, workflowId, [parse]);
}

describe('typed workflow starts', () => {
  it('starts a workflow by name with its options as given', async () => {
    const started: Started[] = [];
    const parse: ParseInput = { documentId: 'd', datasetId: 's', runSeq: 2 };
    await startWorkflow(fakeClient(started), WORKFLOWS.parseDocument, { taskQueue: 'q', workflowId: 'w', args: [parse] });
    assert.deepEqual(started, [{ name: 'parseDocument', options: { taskQueue: 'q', workflowId: 'w', args: [parse] } }]);
  });

  it('startOnce starts on the workflow role\'s queue, with the memo, and is false when one is already running', async () => {
    const started: Started[] = [];
    const wc = fakeWorkflowClient(fakeClient(started), 'cairn');
    const input: MemoryExtractionInput = { memoryId: 'm', messageId: 3 };
    assert.equal(await wc.startOnce(WORKFLOWS.memoryExtraction, 'w', [input], { file: 'f' }), true);
    assert.deepEqual(started, [{ name: 'memoryExtraction', options: { taskQueue: workflowTaskQueue(WORKFLOWS.memoryExtraction, 'cairn'), workflowId: 'w', args: [input], memo: { file: 'f' } } }]);
    assert.equal(await fakeWorkflowClient(fakeClient([], true), 'cairn').startOnce(WORKFLOWS.memoryExtraction, 'w', [input]), false);
  });

  it('keeps workflow code out of the server: the start types come in with `import type` only', async () => {
    // Bundled the way a server process loads it (packages left out): no module under workflows/, and no
    // import of @temporalio/workflow, may be reached from the CLI's entry point.
    const { metafile } = await esbuild.build({
      entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
      absWorkingDir: root,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
    });
    const inputs = Object.entries(metafile.inputs);
    assert.ok(inputs.some(([file]) => file === 'src/engine/workflow-starts.ts'), 'the bundle holds the typed starts');
    assert.deepEqual(inputs.map(([file]) => file).filter((f) => f.startsWith('workflows/')), []);
    assert.deepEqual(inputs.filter(([, input]) => input.imports.some((i) => i.path.startsWith('@temporalio/workflow'))).map(([file]) => file), []);
  });
});
