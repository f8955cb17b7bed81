import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { CanvasDsl, Outputs } from '../../../src/agents/dsl.js';
import {
  aggregateVariables,
  beginMode,
  beginOutputs,
  categorizePrompt,
  categorizeSystemPrompt,
  compare,
  DEFAULT_PROLOGUE,
  evaluateSwitch,
  fillUp,
  graphNodeName,
  historyMessages,
  isFieldSatisfied,
  pickCategory,
  pickTemplate,
  prologue,
  truthy,
} from '../../../src/agents/components/pure.js';
import type { Scope } from '../../../src/agents/refs.js';

function fixture(name: string): CanvasDsl {
  return JSON.parse(readFileSync(new URL(`../../fixtures/agents/${name}.json`, import.meta.url), 'utf8')) as CanvasDsl;
}

function scope(outputs: Record<string, Outputs>, globals: Record<string, unknown> = {}): Scope {
  return { outputs: (id) => outputs[id], globals };
}

describe('agents: pure components', () => {
  describe('Begin', () => {
    const form = {
      inputs: {
        customer_review: { name: 'customer_review', type: 'line', optional: false, value: '' },
        stars: { name: 'stars', type: 'integer', optional: true, value: 5 },
      },
    };

    it('outputs each field from the run inputs, else the field default', () => {
      assert.deepEqual(beginOutputs(form, { customer_review: { value: 'Great' } }, {}), { customer_review: 'Great', stars: 5 });
    });

    it('fills the only field from sys.query when no inputs were given', () => {
      const one = { inputs: { customer_review: { type: 'line' } } };
      assert.deepEqual(beginOutputs(one, {}, { 'sys.query': 'It broke' }), { customer_review: 'It broke' });
    });

    it('does not use a scalar sys.query when the form has several fields', () => {
      assert.deepEqual(beginOutputs(form, {}, { 'sys.query': 'It broke' }), { customer_review: '', stars: 5 });
    });

    it("uses a dict sys.query's matching keys", () => {
      assert.deepEqual(beginOutputs(form, undefined, { 'sys.query': { stars: 2, other: 'x' } }), { customer_review: '', stars: 2 });
    });

    it('parses an object field given as JSON text', () => {
      const obj = { inputs: { cfg: { type: 'object' } } };
      assert.deepEqual(beginOutputs(obj, { cfg: { value: '{"a":1}' } }, {}), { cfg: { a: 1 } });
    });

    it('passes file descriptors through (reading them is I/O, done elsewhere)', () => {
      const files = { inputs: { doc: { type: 'file', optional: false } } };
      const descriptor = [{ id: 'f1', name: 'a.pdf' }];
      assert.deepEqual(beginOutputs(files, { doc: { value: descriptor } }, {}), { doc: descriptor });
    });

    it('a Begin without a form outputs nothing', () => {
      assert.deepEqual(beginOutputs({}, {}, { 'sys.query': 'hi' }), {});
    });

    it("reads the prologue and mode of the canvas' begin component", () => {
      const dispatcher = fixture('customer_feedback_dispatcher');
      assert.equal(prologue(dispatcher), "Hi! I'm your customer review analysis assistant. You can send a review to me.\n");
      assert.equal(beginMode(dispatcher), 'task');
      const chatbot = fixture('your_starter_dataset_chatbot');
      assert.equal(prologue(chatbot), DEFAULT_PROLOGUE, 'RAGFlow default when Begin has no prologue');
      assert.equal(beginMode(chatbot), 'conversational');
    });

    it('a disabled prologue is empty', () => {
      const dsl = { components: { begin: { obj: { component_name: 'Begin', params: { prologue: 'Hi', enablePrologue: false } }, downstream: [], upstream: [] } } };
      assert.equal(prologue(dsl), '');
    });
  });

  describe('UserFillUp', () => {
    const interaction = fixture('user_interaction');
    const params = interaction.components['UserFillUp:GoldBroomsRelate']!.obj.params;
    const s = scope({ 'Agent:LargeFliesMelt': { content: '1. search X' } });

    it('without answers every field is unsatisfied and the event lists it with the rendered tips', () => {
      const r = fillUp(params, {}, s);
      assert.deepEqual(r.unsatisfied, ['instructions']);
      assert.equal(r.event.tips, 'Here is my search plan:\n1. search X\nAre you okay with it?');
      assert.deepEqual(Object.keys(r.event.inputs), ['instructions']);
      assert.equal(r.event.inputs.instructions!.type, 'paragraph');
      assert.equal(r.event.inputs.instructions!.value, null);
      assert.equal(r.outputs.tips, r.event.tips);
    });

    it('answers satisfy the form and become outputs', () => {
      const r = fillUp(params, { instructions: { value: 'Looks good' } }, s);
      assert.deepEqual(r.unsatisfied, []);
      assert.deepEqual(r.event.inputs, {});
      assert.equal(r.outputs.instructions, 'Looks good');
    });

    it('an empty-string answer to a text field counts as answered (only null does not)', () => {
      assert.deepEqual(fillUp(params, { instructions: { value: '' } }, s).unsatisfied, []);
    });

    it('a required file field needs a non-empty value; an optional one is satisfied empty', () => {
      const form = { inputs: { doc: { type: 'file', optional: false }, extra: { type: 'file', optional: true } } };
      assert.deepEqual(fillUp(form, {}, s).unsatisfied, ['doc']);
      assert.deepEqual(fillUp(form, { doc: { value: [] } }, s).unsatisfied, ['doc']);
      assert.deepEqual(fillUp(form, { doc: { value: [{ id: 'f' }] } }, s).unsatisfied, []);
    });

    it('reaching it again without answers clears the previous answer, so it pauses again', () => {
      const answered = { inputs: { q: { type: 'line', value: 'old answer' } } };
      assert.deepEqual(fillUp(answered, {}, s).unsatisfied, ['q']);
    });

    it('disabled tips are neither output nor sent', () => {
      const r = fillUp({ enable_tips: false, inputs: { q: { type: 'line' } } }, {}, s);
      assert.equal(r.event.tips, '');
      assert.equal('tips' in r.outputs, false);
    });

    it('tips join a list reference with commas', () => {
      const r = fillUp({ tips: 'Pick: {a@opts}', inputs: {} }, {}, scope({ a: { opts: ['x', 'y'] } }));
      assert.equal(r.outputs.tips, 'Pick: x,y');
    });

    it('uses the default tips when none are set', () => {
      assert.equal(fillUp({ inputs: { q: {} } }, {}, s).event.tips, 'Please fill up the form');
    });

    it('isFieldSatisfied follows RAGFlow: null is unanswered, a non-dict field is answered unless null', () => {
      assert.equal(isFieldSatisfied({ type: 'line', value: null }), false);
      assert.equal(isFieldSatisfied({ type: 'line', value: 0 }), true);
      assert.equal(isFieldSatisfied({ type: 'file', optional: true }), true);
    });
  });

  describe('Switch', () => {
    it('implements every operator of the reference, text operators case-insensitively', () => {
      assert.equal(compare('Hello World', 'contains', 'world'), true);
      assert.equal(compare('Hello World', 'not contains', 'world'), false);
      assert.equal(compare('Hello World', 'start with', 'HELLO'), true);
      assert.equal(compare('Hello World', 'end with', 'World'), true);
      assert.equal(compare('', 'empty', ''), true);
      assert.equal(compare([], 'empty', ''), true);
      assert.equal(compare(0, 'empty', ''), true);
      assert.equal(compare('x', 'not empty', ''), true);
      assert.equal(compare({}, 'not empty', ''), false);
      assert.equal(compare('abc', '=', 'abc'), true);
      assert.equal(compare('abc', '≠', 'abd'), true);
      assert.equal(compare(5, '>', '3'), true);
      assert.equal(compare(5, '<', '3'), false);
      assert.equal(compare(3, '≥', '3'), true);
      assert.equal(compare(3, '≤', '2'), false);
    });

    it('accepts the ASCII spellings != >= <=', () => {
      assert.equal(compare('a', '!=', 'b'), true);
      assert.equal(compare('10', '>=', '10'), true);
      assert.equal(compare('9', '<=', '10'), true);
    });

    it('compares numerically when both sides are numbers (9 < 10), else as text', () => {
      assert.equal(compare('9', '<', '10'), true);
      assert.equal(compare('5.0', '=', '5'), true);
      assert.equal(compare('b', '>', 'a'), true);
      assert.equal(compare('abc', '=', 'ABC'), false);
    });

    it('rejects an unknown operator', () => {
      assert.throws(() => compare('a', 'in', 'a'), /Not supported operator: in/);
    });

    const params = {
      conditions: [
        { logical_operator: 'and', items: [{ cpn_id: 'Agent:A@content', operator: 'contains', value: 'refund' }, { cpn_id: '{sys.query}', operator: 'not empty' }], to: ['Message:Refund'] },
        { logical_operator: 'or', items: [{ cpn_id: 'begin@score', operator: '>', value: '8' }, { cpn_id: 'begin@vip', operator: '=', value: 'yes' }], to: ['Message:Vip', 'Agent:Vip'] },
      ],
      end_cpn_ids: ['Message:Else'],
    };
    const names: Record<string, string> = { 'Message:Refund': 'Refund', 'Message:Vip': 'VIP', 'Agent:Vip': 'VIP agent', 'Message:Else': 'Else' };

    it("routes to the first condition that holds, writing RAGFlow's next (names) and _next (ids)", () => {
      const s = scope({ 'Agent:A': { content: 'I want a Refund' }, begin: { score: 9, vip: 'no' } }, { 'sys.query': 'q' });
      assert.deepEqual(evaluateSwitch(params, s, (id) => names[id]!), { next: ['Refund'], _next: ['Message:Refund'] });
    });

    it('and needs every item, or needs one', () => {
      const s = scope({ 'Agent:A': { content: 'I want a refund' }, begin: { score: 3, vip: 'yes' } }, { 'sys.query': '' });
      assert.deepEqual(evaluateSwitch(params, s)._next, ['Message:Vip', 'Agent:Vip']);
    });

    it('falls back to end_cpn_ids when no condition holds', () => {
      const s = scope({ 'Agent:A': { content: 'hello' }, begin: { score: 3, vip: 'no' } }, { 'sys.query': 'q' });
      assert.deepEqual(evaluateSwitch(params, s, (id) => names[id]!), { next: ['Else'], _next: ['Message:Else'] });
    });

    it('a condition whose items have no cpn_id never holds', () => {
      const p = { conditions: [{ logical_operator: 'and', items: [{ cpn_id: '', operator: 'empty' }], to: ['X'] }], end_cpn_ids: ['Y'] };
      assert.deepEqual(evaluateSwitch(p, scope({}))._next, ['Y']);
    });
  });

  describe('VariableAggregator', () => {
    it('outputs, per group, the first truthy variable', () => {
      const params = {
        groups: [
          { group_name: 'ReviewCategory', variables: [{ value: 'Categorize:A@category_name' }, { value: 'Categorize:B@category_name' }] },
          { group_name: 'answer', variables: [{ value: '{Agent:X@content}' }, { value: 'Agent:Y@content' }] },
        ],
      };
      const s = scope({ 'Categorize:A': {}, 'Categorize:B': { category_name: 'Transportation issue' }, 'Agent:X': { content: '' }, 'Agent:Y': { content: 'from Y' } });
      assert.deepEqual(aggregateVariables(params, s), { ReviewCategory: 'Transportation issue', answer: 'from Y' });
    });

    it('leaves a group out when none of its variables is truthy', () => {
      const params = { groups: [{ group_name: 'g', variables: [{ value: 'a@x' }] }] };
      assert.deepEqual(aggregateVariables(params, scope({ a: { x: [] } })), {});
    });
  });

  describe('Categorize', () => {
    const dispatcher = fixture('customer_feedback_dispatcher');
    const params = dispatcher.components['Categorize:RottenWallsObey']!.obj.params;

    it('the prompt lists every category with its description and examples and asks for the name only', () => {
      const [system, user] = categorizePrompt(params, 'It broke after a day.', []);
      assert.equal(system!.role, 'system');
      assert.match(system!.content, /classify it into ONE of the following categories:\nNegative review \n - Positive review/);
      assert.match(system!.content, /Category: Positive review\nDescription: Positive review to the product\./);
      assert.match(system!.content, /USER: "1\. Good, I like it\.    2\. It is very helpful\.    3\. It makes my work easier\." → Positive review/);
      assert.match(system!.content, /Return only the category name without explanations/);
      assert.equal(user!.role, 'user');
      assert.equal(user!.content, '\n---- Real Data ----\nUSER: "It broke after a day." →\n');
    });

    it('the user message shows the history before the query, newlines removed', () => {
      const [, user] = categorizePrompt(params, 'and now?', [
        { role: 'user', content: 'first\nline' },
        { role: 'assistant', content: 'ok' },
      ]);
      assert.equal(user!.content, '\n---- Real Data ----\nUSER: "firstline" | ASSISTANT: "ok" | USER: "and now?" →\n');
    });

    it('a category without examples gets no Examples section', () => {
      const p = { category_description: { a: { description: 'A', to: ['x'] } } };
      assert.doesNotMatch(categorizeSystemPrompt(p), /---- Examples ----/);
    });

    it('picks the category named most often in the answer, case-insensitively', () => {
      assert.deepEqual(pickCategory('positive review. POSITIVE REVIEW, not a negative review ', params), {
        category_name: 'Positive review',
        _next: ['Message:SevenPlanetsPeel'],
      });
      assert.deepEqual(pickCategory('Negative review ', params), { category_name: 'Negative review ', _next: ['Categorize:FourTeamsFold'] });
    });

    it('takes the LAST category when the answer names none', () => {
      assert.deepEqual(pickCategory('no idea', params), { category_name: 'Positive review', _next: ['Message:SevenPlanetsPeel'] });
    });
  });

  describe('purity', () => {
    for (const file of ['src/agents/refs.ts', 'src/agents/components/pure.ts', 'src/records.ts']) {
      it(`${file} imports only pure modules and uses no Node APIs or clocks (workflow code imports it)`, () => {
        const source = readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
        const imports = [...source.matchAll(/^import\s[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
        for (const spec of imports) assert.match(spec, /^\.{1,2}\/(\.\.\/)?(dsl|refs|records)\.js$/, `${file} imports ${spec}`);
        assert.doesNotMatch(source, /\b(process\.|Buffer\b|Date\.now|new Date|Math\.random|require\(|setTimeout|crypto\.)/);
      });
    }
  });

  describe('helpers', () => {
    it('truthy follows Python', () => {
      assert.deepEqual([null, undefined, '', 0, false, [], {}].map(truthy), [false, false, false, false, false, false, false]);
      assert.deepEqual(['0', 1, true, [0], { a: 1 }].map(truthy), [true, true, true, true, true]);
    });

    it('pickTemplate chooses a Message template with the random number it is given', () => {
      const p = { content: ['a', 'b', 'c'] };
      assert.equal(pickTemplate(p, 0), 'a');
      assert.equal(pickTemplate(p, 0.5), 'b');
      assert.equal(pickTemplate(p, 0.999), 'c');
      assert.equal(pickTemplate({ content: 'only' }, 0.7), 'only');
    });

    it('graphNodeName reads the editor name of a component', () => {
      const dsl = fixture('customer_feedback_dispatcher');
      assert.equal(graphNodeName(dsl, 'begin'), 'begin');
      assert.equal(graphNodeName(dsl, 'nope'), '');
    });

    it('historyMessages keeps the last n exchanges', () => {
      const h: [string, unknown][] = [['user', 'a'], ['assistant', 'b'], ['user', 'c'], ['assistant', { content: 'd' }]];
      assert.deepEqual(historyMessages(h, 1), [{ role: 'user', content: 'c' }, { role: 'assistant', content: 'd' }]);
      assert.deepEqual(historyMessages(h, 0), []);
    });
  });
});
