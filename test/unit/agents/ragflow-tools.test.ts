import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EXTERNAL_COMPONENTS, externalComponentError, isExternalComponent } from '../../../src/agents/external.js';
import { COMPONENT_NAMES } from '../../../src/agents/dsl.js';
import { DslError, validateDsl } from '../../../src/agents/validate.js';
import { codeJobOf, codeToolSpec } from '../../../src/agents/io/code-tool.js';
import { runModelCall, type ModelRunDeps } from '../../../src/agents/io/model-runner.js';
import { runCode, stopSandboxSpares } from '../../../src/agents/io/sandbox/index.js';
import type { AgentRunInput, ComponentCall, ModelCall, ToolCallEvent } from '../../../src/agents/run-types.js';
import { runCanvas } from '../../../src/agents/interpreter.js';
import type { CanvasDsl } from '../../../src/agents/dsl.js';
import type { ChatDelta, ChatMessage, ChatModel, ChatOptions, ToolCall } from '../../../src/models/types.js';

/**
 * Every component and tool class of RAGFlow (agent/component/*.py, agent/tools/*.py at b1b8cd6), and
 * the tool names its templates use besides them (Bing).
 */
const RAGFLOW_COMPONENTS = ['Agent', 'Begin', 'Browser', 'Categorize', 'DataOperations', 'DocGenerator', 'ExcelProcessor', 'ExitLoop', 'UserFillUp', 'Invoke', 'Iteration', 'IterationItem', 'ListOperations', 'LLM', 'Loop', 'LoopItem', 'Message', 'StringTransform', 'Switch', 'VariableAggregator', 'VariableAssigner'];
const RAGFLOW_TOOLS = ['AkShare', 'ArXiv', 'BGPT', 'CodeExec', 'Crawler', 'DeepL', 'DuckDuckGo', 'Email', 'ExeSQL', 'GitHub', 'Google', 'GoogleScholar', 'Jin10', 'KeenableSearch', 'PubMed', 'QueritSearch', 'QueritContents', 'QWeather', 'Retrieval', 'SearXNG', 'TavilySearch', 'TavilyExtract', 'TuShare', 'WenCai', 'Wikipedia', 'YahooFinance'];
const TEMPLATE_ONLY_TOOLS = ['Bing'];

const never = new AbortController().signal;

/** A model that makes the given calls in its first reply and then answers with what the tools said. */
class CallingModel implements ChatModel {
  readonly id = 'gpt-4o@OpenAI';
  readonly requests: { messages: ChatMessage[]; tools: string[] }[] = [];
  constructor(private readonly calls: (tools: string[]) => ToolCall[]) {}

  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    const tools = (options.tools ?? []).map((t) => t.name);
    this.requests.push({ messages: structuredClone(messages), tools });
    if (!messages.some((m) => m.role === 'tool')) yield { kind: 'tool_calls', text: '', calls: this.calls(tools) };
    else yield { kind: 'answer', text: `Tools said: ${messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' | ')}` };
  }

  async complete(): Promise<string> {
    return '';
  }
}

function deps(model: ChatModel, code: ModelRunDeps['runCode']): ModelRunDeps {
  return {
    chat: async () => model,
    retrieve: async () => Promise.reject(new Error('no retrieval here')),
    mcpServer: async () => Promise.reject(new Error('no MCP here')),
    runCode: code,
  };
}

function agent(tools: ModelCall['tools']): ModelCall & { kind: 'Agent' } {
  return { kind: 'Agent', id: 'Agent:Analyst', messages: [{ role: 'user', content: 'What is 17 + 25 + 58?' }], settings: {}, tools, max_rounds: 2 };
}

function canvasWithAgentTools(tools: unknown[]) {
  return {
    components: {
      begin: { obj: { component_name: 'Begin', params: {} }, downstream: ['Agent:A'], upstream: [] },
      'Agent:A': { obj: { component_name: 'Agent', params: { tools } }, downstream: [], upstream: ['begin'] },
    },
  };
}

describe("agents: RAGFlow's tools (outside services, CodeExec as an Agent tool)", function () {
  this.timeout(60_000);
  after(() => stopSandboxSpares());

  describe('the external table', () => {
    it('every RAGFlow component and tool is either one Cairn runs or one listed as needing an outside service', () => {
      const runs = new Set<string>([...COMPONENT_NAMES]);
      for (const name of [...RAGFLOW_COMPONENTS, ...RAGFLOW_TOOLS, ...TEMPLATE_ONLY_TOOLS]) {
        assert.ok(runs.has(name) !== isExternalComponent(name), `${name}: ${runs.has(name) ? 'Cairn runs it and it is listed as external' : 'neither run by Cairn nor listed as external'}`);
      }
    });

    it('the error names what is missing and the local equivalent (web search: a Retrieval tool over your datasets)', () => {
      assert.equal(externalComponentError('Bing'), 'Bing needs the Bing web search API, an outside service Cairn does not provide; use a Retrieval tool over your datasets instead');
      assert.match(externalComponentError('TavilyExtract'), /^TavilyExtract needs Tavily's extraction API, .*; use an Invoke component \(an HTTP request/);
      assert.match(externalComponentError('DeepL'), /use an LLM component/);
    });

    it('without a local equivalent (ExeSQL, Email) the error says so', () => {
      assert.equal(externalComponentError('ExeSQL'), 'ExeSQL needs an SQL database server, an outside service Cairn does not provide; Cairn has nothing local that does this: remove it');
      assert.match(externalComponentError('Email'), /^Email needs an SMTP mail server, .*nothing local/);
    });

    it('docs/agents.md lists every entry of the table, with the same service and equivalent', () => {
      const docs = readFileSync(new URL('../../../docs/agents.md', import.meta.url), 'utf8');
      for (const [name, { needs, instead }] of Object.entries(EXTERNAL_COMPONENTS)) {
        const row = docs.split('\n').find((l) => l.startsWith(`| ${name} |`));
        assert.ok(row, `docs/agents.md has a row for ${name}`);
        assert.equal(row, `| ${name} | ${needs} | ${instead ?? '—'} |`);
      }
    });
  });

  describe('validation', () => {
    it('an Agent may use CodeExec as a tool without a script of its own (the model writes it)', () => {
      validateDsl(canvasWithAgentTools([{ component_name: 'CodeExec', id: 'CodeExec:X', name: 'CodeExec', params: {} }]));
      validateDsl(canvasWithAgentTools([{ component_name: 'CodeExec', params: { lang: 'javascript', script: 'function main() { return 1; }' } }]));
    });

    it("a CodeExec tool's own params are still checked (language, an empty script)", () => {
      assert.throws(() => validateDsl(canvasWithAgentTools([{ component_name: 'CodeExec', params: { lang: 'ruby' } }])), (e: unknown) => e instanceof DslError && /param 'tools\[0\]\.params\.lang' must be one of/.test(e.message));
      assert.throws(() => validateDsl(canvasWithAgentTools([{ component_name: 'CodeExec', params: { script: '' } }])), /param 'tools\[0\]\.params\.script' must not be empty/);
    });

    it('every outside-service tool of RAGFlow imports as an Agent tool, Bing included', () => {
      validateDsl(canvasWithAgentTools(Object.keys(EXTERNAL_COMPONENTS).map((name) => ({ component_name: name, name, params: { api_key: '' } }))));
    });
  });

  describe('CodeExec as an Agent tool', () => {
    it("the interpreter hands the tool its script as written and its arguments resolved (a sub-Agent's CodeExec tool too)", async () => {
      const script = 'def main(q):\n    return {"echo": q, "literal": "{sys.query}"}';
      const code = { component_name: 'CodeExec', name: 'CodeExec', params: { lang: 'python', script, arguments: { q: 'sys.query' } } };
      const canvas = {
        components: {
          begin: { obj: { component_name: 'Begin', params: {} }, downstream: ['Agent:A'], upstream: [] },
          'Agent:A': { obj: { component_name: 'Agent', params: { tools: [code, { component_name: 'Agent', name: 'helper', params: { sys_prompt: 'Asked: {sys.query}', tools: [code] } }] } }, downstream: [], upstream: ['begin'] },
        },
        globals: {},
        history: [],
        path: [],
        retrieval: [],
      } as unknown as CanvasDsl;
      const calls: ComponentCall[] = [];
      const input: AgentRunInput = { runKey: 'r', agentId: 'a', sessionId: 's', tenantId: 't', createdAt: 1, canvas, names: {}, request: { query: 'sum it', inputs: {}, files: [], userId: 'u' } };
      await runCanvas(input, { call: async (call) => (calls.push(call), { outputs: { content: '' } }), emit: () => undefined, now: () => 1, random: () => 0 });
      const tools = (calls[0] as ModelCall).tools!;
      assert.equal(tools[0]!.params.script, script, 'the script is code, not a template');
      assert.deepEqual(tools[0]!.params.arguments, { q: 'sum it' });
      const nested = (tools[1]!.params.tools as { params: Record<string, unknown> }[])[0]!;
      assert.equal(tools[1]!.params.sys_prompt, 'Asked: sum it', "the sub-Agent's own params are resolved");
      assert.equal(nested.params.script, script);
      assert.deepEqual(nested.params.arguments, { q: 'sum it' });
    });

    it("is offered as RAGFlow's execute_code function: lang and script required, the configured arguments offered too", () => {
      const spec = codeToolSpec('execute_code', { arguments: { rows: '' } });
      assert.equal(spec.name, 'execute_code');
      const parameters = spec.parameters as { properties: Record<string, unknown>; required: string[] };
      assert.deepEqual(parameters.required, ['lang', 'script']);
      assert.deepEqual(Object.keys(parameters.properties), ['lang', 'script', 'arguments', 'rows']);
    });

    it("a call's job: the model's lang and script; main's arguments from the tool, then the call's arguments, then a call argument of the same name", () => {
      assert.deepEqual(codeJobOf({ lang: 'javascript', script: 's', arguments: { a: 1, b: 2 }, b: 3 }, { arguments: { b: 0, c: 'from the canvas' }, outputs: { n: { type: 'Number' } } }), {
        lang: 'javascript',
        script: 's',
        arguments: { a: 1, b: 3, c: 'from the canvas' },
        outputs: { n: { type: 'Number' } },
      });
      assert.throws(() => codeJobOf({ script: 's', arguments: [1] }, {}), /'arguments' must be an object/);
    });

    it("runs the model's script in the sandbox (no access to Cairn's process) and gives the model its result and what it printed", async () => {
      const script = 'function main(args) { console.log("adding", args.xs.length, "numbers"); return { total: args.xs.reduce((a, b) => a + b, 0), pid: typeof process }; }';
      const model = new CallingModel((tools) => [{ id: 'call_1', name: tools[0]!, arguments: JSON.stringify({ lang: 'javascript', script, arguments: { xs: [17, 25, 58] } }) }]);
      const events: ToolCallEvent[] = [];
      const jobs: unknown[] = [];
      const run = await runModelCall(agent([{ component_name: 'CodeExec', name: 'CodeExec', params: {} }]), deps(model, (params, signal) => (jobs.push(params), runCode(params, signal, { timeoutMs: 15_000, memoryMb: 64 }))), {
        signal: never,
        onTool: (e) => events.push(e),
      });
      assert.deepEqual(model.requests[0]!.tools, ['execute_code']);
      assert.equal(jobs.length, 1, 'one sandbox job');
      const tool = model.requests[1]!.messages.at(-1)!;
      assert.equal(tool.role, 'tool');
      // `process` does not exist in the sandbox's context: the script did not run in Cairn's process.
      assert.deepEqual(JSON.parse(tool.content), { result: { total: 100, pid: 'undefined' }, stdout: 'adding 3 numbers\n' });
      assert.match(String(run.outputs.content), /"total":100/);
      const finished = events.find((e) => e.phase === 'finished')!;
      assert.ok(finished.phase === 'finished');
      assert.equal(finished.tool_type, 'CodeExec');
      assert.equal(finished.error, null);
      assert.match(finished.result, /"total":100/);
    });

    it("a script that fails answers the model with the sandbox's error; the Agent goes on", async () => {
      const model = new CallingModel(() => [{ id: 'call_1', name: 'execute_code', arguments: JSON.stringify({ lang: 'javascript', script: 'function main() { throw new TypeError("no rows"); }' }) }]);
      const events: ToolCallEvent[] = [];
      const run = await runModelCall(agent([{ component_name: 'CodeExec', params: {} }]), deps(model, (params, signal) => runCode(params, signal, { timeoutMs: 15_000, memoryMb: 64 })), { signal: never, onTool: (e) => events.push(e) });
      assert.match(String(run.outputs.content), /^Tools said: Error: CodeExec \(javascript\): TypeError: no rows/);
      const finished = events.at(-1)!;
      assert.ok(finished.phase === 'finished');
      assert.match(String(finished.error), /TypeError: no rows/);
    });
  });

  describe('an outside-service tool in an Agent', () => {
    it('answers the model with what is missing and what to use instead; the Agent still answers', async () => {
      const names = ['Bing', 'Google', 'DuckDuckGo', 'Wikipedia', 'TavilySearch', 'TavilyExtract'];
      const model = new CallingModel((tools) => tools.map((name, i) => ({ id: `call_${i}`, name, arguments: JSON.stringify({ query: 'cairns' }) })));
      const events: ToolCallEvent[] = [];
      const run = await runModelCall(agent(names.map((name) => ({ component_name: name, name, params: {} }))), deps(model, async () => assert.fail('no code runs')), { signal: never, onTool: (e) => events.push(e) });
      assert.deepEqual(model.requests[0]!.tools, names);
      const results = model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      assert.deepEqual(results, names.map((n) => `Error: ${externalComponentError(n)}`));
      assert.match(results[0]!, /Bing needs the Bing web search API, .*use a Retrieval tool over your datasets instead/);
      assert.ok(String(run.outputs.content).startsWith('Tools said: Error: Bing needs'));
      assert.deepEqual(
        events.filter((e) => e.phase === 'finished').map((e) => e.tool_type),
        names,
      );
    });
  });
});
