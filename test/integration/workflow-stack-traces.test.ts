import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { workflowIds } from '../../src/engine/task-queues.js';
import { canvas, createAgent, runStream, streamedText } from './agent-helpers.js';
import { adminKeyOf, devServerOf, startCairnProcess, type CairnProcess } from './cairn-process.js';
import { Api, eventually } from './client.js';

/**
 * CAIRN_WORKFLOW_STACK_TRACES (docs/operations.md, "Workflow stack traces"): Cairn's patched SDK records a
 * stack trace per workflow promise only when asked, so Temporal's stack-trace query (the Web UI's "Stack
 * Trace" tab, `temporal workflow stack`) answers only then, and says why not otherwise.
 */
describe('workflow stack traces (CAIRN_WORKFLOW_STACK_TRACES)', function () {
  this.timeout(240_000);
  let cairn: CairnProcess | undefined;
  let dataDir = '';

  afterEach(async () => {
    await cairn?.stop();
    cairn = undefined;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Asks for the stack trace of an agent turn while it runs (a CodeExec script busy for a few seconds), as an
   * operator would; the turn's answer comes back beside it.
   */
  async function stackTraceOfARunningTurn(setting: string): Promise<{ stack: PromiseSettledResult<string>; answer: string }> {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-stack-traces-'));
    cairn = await startCairnProcess(dataDir, undefined, { env: { CAIRN_WORKFLOW_STACK_TRACES: setting } });
    const api = new Api(cairn.url, adminKeyOf(dataDir));
    const agentId = await createAgent(api, canvas([
      ['begin', 'Begin', { mode: 'conversational', prologue: 'Hello.' }, ['CodeExec:Busy']],
      ['CodeExec:Busy', 'CodeExec', { lang: 'javascript', script: 'function main() { const end = Date.now() + 4000; while (Date.now() < end) {} return "finished"; }', timeout: 60, outputs: { result: { type: 'string', value: '' } } }, ['Message:Out']],
      ['Message:Out', 'Message', { content: ['{CodeExec:Busy@result}'] }, []],
    ]));
    const sessionId = (await api.post(`/agents/${agentId}/sessions`, {})).body.data.id as string;
    const turn = runStream(api, { agent_id: agentId, session_id: sessionId, query: 'go' });
    const connection = await Connection.connect({ address: `127.0.0.1:${devServerOf(dataDir).port}` });
    try {
      const handle = new Client({ connection }).workflow.getHandle(workflowIds.agentRun(agentId, sessionId));
      await eventually(async () => (await handle.describe().catch(() => undefined))?.status.name === 'RUNNING');
      const [stack] = await Promise.allSettled([handle.query<string>('__stack_trace')]);
      return { stack: stack!, answer: streamedText((await turn).events) };
    } finally {
      await connection.close();
    }
  }

  it('is off by default (false): the stack-trace query answers that stack traces are not enabled, and the turn is unharmed', async () => {
    const { stack, answer } = await stackTraceOfARunningTurn('false');
    assert.equal(stack.status, 'rejected');
    assert.match(String((stack as PromiseRejectedResult).reason), /stack traces are not enabled/i);
    assert.equal(answer, 'finished');
  });

  it("when true, the stack-trace query shows where the running turn waits, in Cairn's workflow code", async () => {
    const { stack, answer } = await stackTraceOfARunningTurn('true');
    assert.equal(stack.status, 'fulfilled', String((stack as PromiseRejectedResult).reason));
    assert.match((stack as PromiseFulfilledResult<string>).value, /agent-run|interpreter/);
    assert.equal(answer, 'finished');
  });
});
