import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { CanvasDsl } from '../../../src/agents/dsl.js';
import { COMPONENT_NAMES } from '../../../src/agents/dsl.js';
import { componentSchema, DslError, validateDsl, withDefaults } from '../../../src/agents/validate.js';

const FIXTURES = ['your_starter_dataset_chatbot', 'customer_feedback_dispatcher', 'user_interaction'] as const;

function fixture(name: string): CanvasDsl {
  return JSON.parse(readFileSync(new URL(`../../fixtures/agents/${name}.json`, import.meta.url), 'utf8')) as CanvasDsl;
}

/** begin -> <id> -> Message:Out, with the given component in the middle. */
function canvas(id: string, component_name: string, params: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    components: {
      begin: { obj: { component_name: 'Begin', params: {} }, downstream: [id], upstream: [] },
      [id]: { obj: { component_name, params }, downstream: ['Message:Out'], upstream: ['begin'] },
      'Message:Out': { obj: { component_name: 'Message', params: { content: ['{sys.query}'] } }, downstream: [], upstream: [id] },
    },
    ...extra,
  };
}

function rejects(dsl: unknown, pattern: RegExp): DslError {
  let caught: unknown;
  assert.throws(
    () => validateDsl(dsl),
    (err: unknown) => {
      caught = err;
      return err instanceof DslError && pattern.test(err.message);
    },
  );
  return caught as DslError;
}

const llm = (params: Record<string, unknown>) => canvas('LLM:Foo', 'LLM', { llm_id: 'm@f', prompts: [{ role: 'user', content: '{sys.query}' }], ...params });

describe('agents: DSL validation', () => {
  describe("RAGFlow's templates", () => {
    for (const name of FIXTURES) {
      it(`the ${name} template validates as RAGFlow ships it (graph, UI keys and all)`, () => {
        const dsl = fixture(name);
        const out = validateDsl(dsl);
        assert.deepEqual(out.components, dsl.components);
        assert.deepEqual(out.graph, dsl.graph);
      });
    }

    it('the templates have the shapes the integration tests rely on', () => {
      const chatbot = fixture('your_starter_dataset_chatbot').components;
      assert.deepEqual(chatbot.begin!.downstream, ['Agent:StalePandasDream']);
      assert.equal((chatbot['Agent:StalePandasDream']!.obj.params.tools as { component_name: string }[])[0]!.component_name, 'Retrieval');
      assert.deepEqual(chatbot['Message:BrownPugsStick']!.obj.params.content, ['{Agent:StalePandasDream@content}']);
      const dispatcher = fixture('customer_feedback_dispatcher').components;
      assert.equal(dispatcher.begin!.obj.params.mode, 'task');
      assert.equal(dispatcher['Categorize:RottenWallsObey']!.obj.params.query, 'begin@customer_review');
      assert.equal(dispatcher['VariableAggregator:FlatBerriesRest']!.obj.component_name, 'VariableAggregator');
      const interaction = fixture('user_interaction').components;
      assert.deepEqual(interaction['UserFillUp:GoldBroomsRelate']!.downstream, ['Agent:TangyWordsType']);
    });

    it('does not change the DSL it is given', () => {
      const dsl = fixture('your_starter_dataset_chatbot');
      const before = JSON.stringify(dsl);
      validateDsl(dsl);
      assert.equal(JSON.stringify(dsl), before);
    });
  });

  describe('defaults', () => {
    it('fills the missing globals and run state', () => {
      const out = validateDsl({ components: { begin: { obj: { component_name: 'Begin', params: {} } } } });
      assert.deepEqual(out.globals, { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [] });
      assert.deepEqual(out.history, []);
      assert.deepEqual(out.path, []);
      assert.deepEqual(out.retrieval, []);
      assert.deepEqual(out.components.begin!.downstream, []);
      assert.deepEqual(out.components.begin!.upstream, []);
    });

    it('keeps globals that are set and starts env.<name> from the conversation variables', () => {
      const out = validateDsl({
        components: { begin: { obj: { component_name: 'Begin', params: {} } } },
        globals: { 'sys.query': 'hi', 'sys.user_id': 'u' },
        variables: { color: { type: 'string', value: 'blue' }, n: { type: 'number' }, tags: { type: 'array<string>' } },
      });
      assert.equal(out.globals['sys.query'], 'hi');
      assert.equal(out.globals['sys.user_id'], 'u');
      assert.equal(out.globals['env.color'], 'blue');
      assert.equal(out.globals['env.n'], 0);
      assert.deepEqual(out.globals['env.tags'], []);
    });

    it("an old single reference bucket and an empty variables list are normalised", () => {
      const out = validateDsl({ components: { begin: { obj: { component_name: 'Begin', params: {} } } }, retrieval: { chunks: [], doc_aggs: [] }, variables: [] });
      assert.deepEqual(out.retrieval, []);
      assert.deepEqual(out.variables, {});
    });

    it('withDefaults fills the params RAGFlow defaults without touching the stored ones', () => {
      const params = { kb_ids: ['kb1'] };
      const filled = withDefaults('Retrieval', params);
      assert.equal(filled.similarity_threshold, 0.2);
      assert.equal(filled.top_n, 8);
      assert.equal(filled.top_k, 1024);
      assert.equal(filled.max_retries, 0);
      assert.equal(filled.delay_after_error, 2.0);
      assert.deepEqual(params, { kb_ids: ['kb1'] });
      assert.equal(withDefaults('Agent', {}).max_rounds, 5);
      assert.deepEqual(withDefaults('Agent', {}).prompts, [{ role: 'user', content: '{sys.query}' }]);
      assert.equal(withDefaults('Categorize', {}).message_history_window_size, 1);
      assert.equal(withDefaults('LLM', {}).message_history_window_size, 13);
      assert.equal(withDefaults('Begin', {}).mode, 'conversational');
    });

    it('every component Cairn runs has a params schema', () => {
      for (const name of COMPONENT_NAMES) assert.equal(typeof componentSchema(name), 'object');
    });
  });

  describe('top-level shape', () => {
    it('rejects a DSL that is not an object', () => {
      rejects([], /dsl must be an object/);
      rejects('x', /dsl must be an object/);
    });

    it('rejects a DSL without components', () => rejects({ graph: {} }, /`?components`? is required|components' is required|dsl\.components is required/));

    it('rejects history that is not a list of [role, content] pairs', () => {
      rejects({ ...llm({}), history: 'none' }, /dsl\.history must be an array/);
      rejects({ ...llm({}), history: [['user']] }, /dsl\.history\[0\]/);
    });

    it('rejects globals of the wrong type', () => rejects({ ...llm({}), globals: { 'sys.conversation_turns': 'two' } }, /sys\.conversation_turns/));

    it('rejects a component without obj.component_name, naming it', () => {
      const dsl = llm({});
      (dsl.components as Record<string, unknown>)['Bad:1'] = { obj: { params: {} } };
      rejects(dsl, /Component 'Bad:1': 'obj\.component_name' is required/);
    });

    it('an unknown component name is rejected naming it', () => {
      const e = rejects(canvas('X:1', 'Frobnicate', {}), /^Component 'X:1': unknown component 'Frobnicate'$/);
      assert.equal(e.componentId, 'X:1');
    });

    it('a canvas without a begin component is rejected', () => {
      rejects({ components: { 'Message:1': { obj: { component_name: 'Message', params: { content: ['x'] } } } } }, /no 'begin' component/);
    });

    it("the component with id 'begin' must be a Begin", () => {
      rejects({ components: { begin: { obj: { component_name: 'Message', params: { content: ['x'] } } } } }, /'begin' must be a Begin/);
    });
  });

  describe('params', () => {
    it('names the component, its type and the param that is out of range', () => {
      const e = rejects(llm({ temperature: 3 }), /^Component 'LLM:Foo' \(LLM\): param 'temperature' must be <= 2$/);
      assert.equal(e.componentId, 'LLM:Foo');
      assert.equal(e.param, 'temperature');
    });

    it('rejects a param of the wrong type', () => {
      rejects(llm({ cite: 'yes' }), /param 'cite' must be a boolean/);
      rejects(llm({ max_retries: 1.5 }), /param 'max_retries' must be an integer/);
      rejects(llm({ sys_prompt: 42 }), /param 'sys_prompt' must be a string/);
    });

    it('rejects an unknown enum value, listing the allowed ones', () => {
      rejects(llm({ exception_method: 'retry' }), /param 'exception_method' must be one of null, "", "comment", "goto"/);
      rejects(canvas('begin2', 'Begin', { mode: 'chat' }), /param 'mode' must be one of "conversational", "task", "Webhook"/);
    });

    it('names a nested param by its path', () => {
      rejects(llm({ prompts: [{ role: 'robot', content: 'x' }] }), /param 'prompts\[0\]\.role' must be one of/);
      rejects(llm({ prompts: [] }), /param 'prompts' must not be empty/);
    });

    it('accepts numeric strings where RAGFlow parses numbers (temperature "0.1"), range-checked', () => {
      validateDsl(llm({ temperature: '0.1', max_tokens: '256' }));
      rejects(llm({ temperature: '7' }), /param 'temperature' must be a number between 0 and 2/);
      rejects(llm({ top_p: 'high' }), /param 'top_p' must be a number between 0 and 1/);
    });

    it('allows the extra keys the RAGFlow editor writes into params', () => {
      validateDsl(llm({ llm_filter: 'all', tenant_llm_id: 90, showStructuredOutput: false, exception_comment: '' }));
    });

    it('checks the common params on every component', () => {
      rejects(llm({ delay_after_error: -1 }), /param 'delay_after_error' must be >= 0/);
      rejects(llm({ message_history_window_size: -2 }), /param 'message_history_window_size' must be >= 0/);
      rejects(llm({ exception_goto: 'Message:Out' }), /param 'exception_goto' must be an array or null/);
    });

    it("Cairn's timeout must be a positive number of seconds", () => {
      validateDsl(llm({ timeout: 0.5 }));
      rejects(llm({ timeout: 0 }), /param 'timeout' must be > 0/);
      rejects(llm({ timeout: '10' }), /param 'timeout' must be a number/);
    });

    it('Retrieval: thresholds in [0, 1], top_n >= 1, retrieval_from dataset|memory', () => {
      const retrieval = (p: Record<string, unknown>) => canvas('Retrieval:R', 'Retrieval', { kb_ids: ['kb'], ...p });
      validateDsl(retrieval({ similarity_threshold: 0.2, keywords_similarity_weight: 0.7, top_n: 8, top_k: 1024, use_kg: false, toc_enhance: true, cross_languages: ['English'], meta_data_filter: {}, rerank_id: '', empty_response: '' }));
      rejects(retrieval({ similarity_threshold: 1.5 }), /Component 'Retrieval:R' \(Retrieval\): param 'similarity_threshold' must be <= 1/);
      rejects(retrieval({ top_n: 0 }), /param 'top_n' must be >= 1/);
      rejects(retrieval({ retrieval_from: 'web' }), /param 'retrieval_from' must be one of "dataset", "memory"/);
      rejects(retrieval({ kb_ids: 'kb' }), /param 'kb_ids' must be an array/);
    });

    it('Message: content must be a non-empty list of strings, or a string', () => {
      validateDsl(canvas('Message:M', 'Message', { content: 'just text' }));
      rejects(canvas('Message:M', 'Message', {}), /Component 'Message:M' \(Message\): param 'content' is required/);
      rejects(canvas('Message:M', 'Message', { content: [] }), /param 'content' must not be empty/);
      rejects(canvas('Message:M', 'Message', { content: [1] }), /param 'content\[0\]' must be a string/);
      rejects(canvas('Message:M', 'Message', { content: ['x'], stream: 'no' }), /param 'stream' must be a boolean/);
      rejects(canvas('Message:M', 'Message', { content: ['x'], output_format: 'rtf' }), /param 'output_format' must be one of/);
    });

    it('Agent: max_rounds is a non-negative integer', () => {
      rejects(canvas('Agent:A', 'Agent', { max_rounds: -1 }), /Component 'Agent:A' \(Agent\): param 'max_rounds' must be >= 0/);
    });

    it('Agent: tools are Retrieval, Agent or a RAGFlow tool needing an outside service; their params are checked', () => {
      const agent = (tools: unknown[]) => canvas('Agent:A', 'Agent', { tools });
      validateDsl(agent([{ component_name: 'Retrieval', name: 'Retrieval', params: { kb_ids: [] } }, { component_name: 'Agent', name: 'sub', params: { description: 'helper' } }]));
      validateDsl(agent([{ component_name: 'TavilySearch', params: { api_key: 'k' } }, { component_name: 'Agent', params: { tools: [{ component_name: 'Google' }] } }]));
      rejects(agent([{ component_name: 'Frobnicator', params: {} }]), /param 'tools\[0\]\.component_name': unknown tool 'Frobnicator'/);
      rejects(agent([{ component_name: 'Retrieval', params: { top_n: -3 } }]), /Component 'Agent:A' \(Agent\): param 'tools\[0\]\.params\.top_n' must be >= 1/);
      rejects(agent([{ component_name: 'Agent', params: { tools: [{ component_name: 'Nope' }] } }]), /tools\[0\]\.params\.tools\[0\]\.component_name': unknown tool 'Nope'/);
    });

    it('a RAGFlow component that needs an outside service (TavilySearch, ExeSQL, Email…) imports; it fails only when it runs', () => {
      validateDsl(canvas('TavilySearch:T', 'TavilySearch', { api_key: '', query: 'sys.query' }));
      validateDsl(canvas('ExeSQL:Q', 'ExeSQL', { db_type: 'mysql' }));
    });

    it('LLM: outputs.structured must be a valid JSON Schema', () => {
      const schema = { type: 'object', properties: { answer: { type: 'string' } } };
      validateDsl(llm({ outputs: { content: { type: 'string', value: '' }, structured: schema } }));
      rejects(llm({ outputs: { structured: { type: 'nonsense-type', properties: {} } } }), /param 'outputs\.structured' is not a valid JSON Schema/);
      rejects(llm({ outputs: { structured: 'x' } }), /param 'outputs\.structured' must be an object/);
    });

    it('Categorize: needs categories, each with a non-empty to', () => {
      rejects(canvas('Categorize:C', 'Categorize', {}), /param 'category_description' is required/);
      rejects(canvas('Categorize:C', 'Categorize', { category_description: {} }), /param 'category_description' must not be empty/);
      rejects(canvas('Categorize:C', 'Categorize', { category_description: { 'Negative review ': { to: [] } } }), /param 'category_description\["Negative review "\]\.to' must not be empty/);
    });

    it('Switch: every operator of the reference is accepted, others are not', () => {
      const ops = ['contains', 'not contains', 'start with', 'end with', 'empty', 'not empty', '=', '≠', '!=', '>', '<', '≥', '>=', '≤', '<='];
      const sw = (operator: string) =>
        canvas('Switch:S', 'Switch', { conditions: [{ logical_operator: 'and', items: [{ cpn_id: 'sys.query', operator, value: '1' }], to: ['Message:Out'] }], end_cpn_ids: ['Message:Out'] });
      for (const op of ops) validateDsl(sw(op));
      rejects(sw('in'), /param 'conditions\[0\]\.items\[0\]\.operator' must be one of/);
    });

    it('Switch: logical_operator is and|or; end_cpn_ids are required', () => {
      const base = { conditions: [{ logical_operator: 'xor', items: [], to: ['Message:Out'] }], end_cpn_ids: ['Message:Out'] };
      rejects(canvas('Switch:S', 'Switch', base), /param 'conditions\[0\]\.logical_operator' must be one of "and", "or"/);
      rejects(canvas('Switch:S', 'Switch', { conditions: [{ items: [], to: ['Message:Out'] }] }), /param 'end_cpn_ids' is required/);
    });

    it('VariableAggregator: groups need a name and variables', () => {
      rejects(canvas('VariableAggregator:V', 'VariableAggregator', { groups: [{ group_name: '', variables: [{ value: 'a@b' }] }] }), /param 'groups\[0\]\.group_name' must not be empty/);
      rejects(canvas('VariableAggregator:V', 'VariableAggregator', { groups: [{ group_name: 'g', variables: [] }] }), /param 'groups\[0\]\.variables' must not be empty/);
    });

    it('Begin / UserFillUp: form fields are type-checked', () => {
      rejects(canvas('UserFillUp:U', 'UserFillUp', { inputs: { q: { type: 'line', optional: 'no' } } }), /param 'inputs\.q\.optional' must be a boolean/);
      rejects(canvas('UserFillUp:U', 'UserFillUp', { enable_tips: 1 }), /param 'enable_tips' must be a boolean/);
    });
  });

  describe('component ids', () => {
    it('downstream and upstream must name existing components', () => {
      const dsl = llm({});
      (dsl.components as Record<string, { downstream: string[] }>)['LLM:Foo']!.downstream = ['Message:Gone'];
      rejects(dsl, /Component 'LLM:Foo' \(LLM\): field 'downstream' refers to unknown component 'Message:Gone'/);
    });

    it('a component wired to itself (its downstream or upstream names it) is refused, naming it', () => {
      for (const field of ['downstream', 'upstream'] as const) {
        const dsl = llm({});
        (dsl.components as Record<string, Record<string, string[]>>)['LLM:Foo']![field] = ['LLM:Foo'];
        rejects(dsl, new RegExp(`Component 'LLM:Foo' \\(LLM\\): field '${field}' wires the component to itself`));
      }
    });

    it('exception_goto must name existing components', () => {
      rejects(llm({ exception_method: 'goto', exception_goto: ['Nowhere'] }), /param 'exception_goto' refers to unknown component 'Nowhere'/);
    });

    it("Categorize's to must name existing components", () => {
      rejects(
        canvas('Categorize:C', 'Categorize', { category_description: { a: { to: ['Message:Out'] }, b: { to: ['Message:Gone'] } } }),
        /Component 'Categorize:C' \(Categorize\): param 'category_description\.b\.to' refers to unknown component 'Message:Gone'/,
      );
    });

    it("Switch's to and end_cpn_ids must name existing components", () => {
      const cond = (to: string[]) => [{ logical_operator: 'and', items: [{ cpn_id: 'sys.query', operator: 'empty' }], to }];
      rejects(canvas('Switch:S', 'Switch', { conditions: cond(['Nope']), end_cpn_ids: ['Message:Out'] }), /param 'conditions\[0\]\.to' refers to unknown component 'Nope'/);
      rejects(canvas('Switch:S', 'Switch', { conditions: cond(['Message:Out']), end_cpn_ids: ['Nope'] }), /param 'end_cpn_ids' refers to unknown component 'Nope'/);
    });
  });
});
