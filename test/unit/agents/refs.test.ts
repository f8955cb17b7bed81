import assert from 'node:assert/strict';
import type { Outputs } from '../../../src/agents/dsl.js';
import {
  isWholeRef,
  referencedComponents,
  renderTemplate,
  resolveParam,
  resolveRef,
  splitTemplate,
  VariableNotFoundError,
  walkPath,
  type Scope,
} from '../../../src/agents/refs.js';

function scope(outputs: Record<string, Outputs>, globals: Record<string, unknown> = {}): Scope {
  return { outputs: (id) => outputs[id], globals };
}

const s = scope(
  {
    begin: { customer_review: 'It broke.', count: 3 },
    'Agent:StalePandasDream': {
      content: 'The answer',
      structured: { items: [{ title: 'first' }, { title: 'second' }], ok: true },
      json_text: '{"a": {"b": [10, 20]}}',
      nothing: null,
    },
    'Retrieval:Kb_1': { json: [{ content: 'chunk' }] },
    'Message:NotRunYet': {},
  },
  {
    'sys.query': 'what is a cairn?',
    'sys.user_id': 'u1',
    'sys.conversation_turns': 2,
    'sys.files': [],
    'sys.history': ['user: hi', 'assistant: hello'],
    'env.color': 'blue',
  },
);

describe('agents: variable references', () => {
  describe('resolveRef', () => {
    it('resolves a component output written with braces', () => {
      assert.equal(resolveRef('{begin@customer_review}', s), 'It broke.');
    });

    it('resolves a component output written without braces', () => {
      assert.equal(resolveRef('begin@customer_review', s), 'It broke.');
    });

    it('tolerates extra surrounding braces and spaces', () => {
      assert.equal(resolveRef('{{ {begin@customer_review} }}', s), 'It broke.');
    });

    it('resolves sys and env globals, with or without braces', () => {
      assert.equal(resolveRef('{sys.query}', s), 'what is a cairn?');
      assert.equal(resolveRef('sys.conversation_turns', s), 2);
      assert.equal(resolveRef('{env.color}', s), 'blue');
    });

    it('is case-insensitive on the sys/env prefix', () => {
      assert.equal(resolveRef('{SYS.query}', s), 'what is a cairn?');
      assert.equal(resolveRef('Env.color', s), 'blue');
    });

    it('walks dicts by key and lists by integer index', () => {
      assert.equal(resolveRef('Agent:StalePandasDream@structured.items.1.title', s), 'second');
      assert.equal(resolveRef('Agent:StalePandasDream@structured.ok', s), true);
    });

    it('counts a negative list index from the end, as Python does', () => {
      assert.equal(resolveRef('Agent:StalePandasDream@structured.items.-1.title', s), 'second');
    });

    it('parses JSON strings met on the way', () => {
      assert.equal(resolveRef('Agent:StalePandasDream@json_text.a.b.0', s), 10);
    });

    it('gives null for a miss anywhere on the path', () => {
      assert.equal(resolveRef('Agent:StalePandasDream@structured.nope', s), null);
      assert.equal(resolveRef('Agent:StalePandasDream@structured.items.9', s), null);
      assert.equal(resolveRef('Agent:StalePandasDream@structured.items.x', s), null);
      assert.equal(resolveRef('Agent:StalePandasDream@content.x', s), null);
      assert.equal(resolveRef('Agent:StalePandasDream@nothing.x', s), null);
    });

    it('gives null for an output a component has not produced', () => {
      assert.equal(resolveRef('Message:NotRunYet@content', s), null);
    });

    it("throws Can't find variable for an unknown component", () => {
      assert.throws(
        () => resolveRef('{Agent:Gone@content}', s),
        (e: unknown) => e instanceof VariableNotFoundError && e.message === "Can't find variable: 'Agent:Gone@content'",
      );
    });

    it('throws for an unknown sys or env key', () => {
      assert.throws(() => resolveRef('{sys.nope}', s), /Can't find variable: 'sys.nope'/);
      assert.throws(() => resolveRef('env.missing', s), /Can't find variable: 'env.missing'/);
    });

    it('walks into a global when the dotted name is not itself a key', () => {
      assert.equal(resolveRef('sys.history.1', s), 'assistant: hello');
    });
  });

  describe('resolveParam', () => {
    it('a whole-value reference keeps its type', () => {
      assert.deepEqual(resolveParam('{Retrieval:Kb_1@json}', s), [{ content: 'chunk' }]);
      assert.equal(resolveParam('{begin@count}', s), 3);
      assert.deepEqual(resolveParam('{Agent:StalePandasDream@structured}', s), { items: [{ title: 'first' }, { title: 'second' }], ok: true });
    });

    it('a brace-less whole value is a reference only when its component or global exists', () => {
      assert.equal(resolveParam('begin@count', s), 3);
      assert.equal(resolveParam('sys.query', s), 'what is a cairn?');
      assert.equal(resolveParam('someone@example.com', s), 'someone@example.com');
    });

    it('references inside text are substituted, non-strings JSON-encoded and null as empty', () => {
      assert.equal(
        resolveParam('Q: {sys.query} n={begin@count} s={Agent:StalePandasDream@structured.ok} list={Retrieval:Kb_1@json} none=[{Agent:StalePandasDream@nothing}]', s),
        'Q: what is a cairn? n=3 s=true list=[{"content":"chunk"}] none=[]',
      );
    });

    it('strings without references, numbers, booleans and null pass through', () => {
      assert.equal(resolveParam('plain text {not a ref}', s), 'plain text {not a ref}');
      assert.equal(resolveParam(0.2, s), 0.2);
      assert.equal(resolveParam(false, s), false);
      assert.equal(resolveParam(null, s), null);
    });

    it('arrays and objects are resolved deeply (prompt lists, kb_ids, tool params)', () => {
      const prompts = [{ role: 'user', content: 'The user query is {sys.query}' }];
      assert.deepEqual(resolveParam(prompts, s), [{ role: 'user', content: 'The user query is what is a cairn?' }]);
      assert.deepEqual(resolveParam({ kb_ids: ['{begin@customer_review}', 'abc'], top_n: 8, query: undefined }, s), {
        kb_ids: ['It broke.', 'abc'],
        top_n: 8,
      });
    });

    it('does not change the value it resolves', () => {
      const params = { prompts: [{ role: 'user', content: '{sys.query}' }] };
      resolveParam(params, s);
      assert.equal(params.prompts[0]!.content, '{sys.query}');
    });
  });

  describe('renderTemplate', () => {
    it('replaces the whole match including extra braces', () => {
      assert.equal(renderTemplate('Review: {{begin@customer_review}}!', s), 'Review: It broke.!');
    });

    it('keeps the spaces of the text around a reference', () => {
      assert.equal(renderTemplate('Q: {sys.query} (turn {sys.conversation_turns})', s), 'Q: what is a cairn? (turn 2)');
    });

    it('throws when a referenced component does not exist', () => {
      assert.throws(() => renderTemplate('x {Nope:1@content}', s), VariableNotFoundError);
    });

    it('leaves text without references unchanged', () => {
      assert.equal(renderTemplate('{"json": "like"}', s), '{"json": "like"}');
    });
  });

  describe('splitTemplate', () => {
    it('gives literal pieces and references in order, naming the component', () => {
      assert.deepEqual(splitTemplate("Customer's review: {begin@customer_review}\n\nCategory: {Categorize:RottenWallsObey@category_name}"), [
        { text: "Customer's review: " },
        { ref: 'begin@customer_review', componentId: 'begin' },
        { text: '\n\nCategory: ' },
        { ref: 'Categorize:RottenWallsObey@category_name', componentId: 'Categorize:RottenWallsObey' },
      ]);
    });

    it('a template that is one reference is one piece; globals have no component', () => {
      assert.deepEqual(splitTemplate('{Agent:StalePandasDream@content}'), [{ ref: 'Agent:StalePandasDream@content', componentId: 'Agent:StalePandasDream' }]);
      assert.deepEqual(splitTemplate('Q {SYS.query}'), [{ text: 'Q ' }, { ref: 'sys.query' }]);
    });

    it('text without references is one literal piece, and empty text none', () => {
      assert.deepEqual(splitTemplate('hello'), [{ text: 'hello' }]);
      assert.deepEqual(splitTemplate(''), []);
    });
  });

  describe('referencedComponents', () => {
    it('finds component ids anywhere in a param value, once each, in order', () => {
      const params = {
        sys_prompt: 'Plan: {Agent:LargeFliesMelt@content} {sys.query}',
        prompts: [{ role: 'user', content: '{UserFillUp:GoldBroomsRelate@instructions} and {Agent:LargeFliesMelt@content}' }],
        n: 3,
      };
      assert.deepEqual(referencedComponents(params), ['Agent:LargeFliesMelt', 'UserFillUp:GoldBroomsRelate']);
    });

    it('counts a whole brace-less cpn@var string (Switch cpn_id, Categorize query)', () => {
      assert.deepEqual(referencedComponents({ query: 'begin@customer_review' }), ['begin']);
      assert.deepEqual(referencedComponents({ conditions: [{ items: [{ cpn_id: 'Agent:ManyToesBrush@content' }] }] }), ['Agent:ManyToesBrush']);
    });

    it('ignores sys/env references and plain text', () => {
      assert.deepEqual(referencedComponents(['{sys.query}', 'hello', 42, null]), []);
    });
  });

  it('isWholeRef tells one reference from text around it', () => {
    assert.equal(isWholeRef('{begin@x}'), true);
    assert.equal(isWholeRef(' {{sys.query}} '), true);
    assert.equal(isWholeRef('a {begin@x}'), false);
    assert.equal(isWholeRef('{begin@x}{begin@y}'), false);
  });

  it('walkPath on an empty path returns the value, null for undefined', () => {
    assert.equal(walkPath('x', ''), 'x');
    assert.equal(walkPath(undefined, ''), null);
  });
});
