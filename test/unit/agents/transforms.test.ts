import assert from 'node:assert/strict';
import type { Outputs } from '../../../src/agents/dsl.js';
import type { Scope } from '../../../src/agents/refs.js';
import {
  applyAssignment,
  assignVariables,
  dataOperations,
  ERR_DIVIDE_BY_ZERO,
  ERR_NOT_NUMBER,
  ERR_PARAMETER_NOT_LIST,
  ERR_PARAMETER_NOT_LIST_ELEMENT_TYPE,
  ERR_VARIABLE_NOT_LIST,
  listOperations,
  parsePythonLiteral,
  pyCompare,
  pyRepr,
  stringTransform,
  VARIABLE_ASSIGNER_OPERATORS,
} from '../../../src/agents/components/transforms.js';
import { DslError, validateDsl, withDefaults } from '../../../src/agents/validate.js';

/** Components listed in `outputs` exist (those given `{}` have not run); any other id is unknown. */
function scope(outputs: Record<string, Outputs>, globals: Record<string, unknown> = {}): Scope {
  return { outputs: (id) => outputs[id], globals };
}

/** Runs a VariableAssigner's rows and applies them, as the interpreter does; returns the new state. */
function assign(variables: unknown[], outputs: Record<string, Outputs> = {}, globals: Record<string, unknown> = {}) {
  const state = { globals: structuredClone(globals), outputs: structuredClone(outputs) };
  const assignments = assignVariables({ variables }, scope(state.outputs, state.globals));
  for (const a of assignments) applyAssignment(state.globals, state.outputs, a.target, a.value);
  return { ...state, assignments };
}

/** The value of `env.v` after one row applied to it. */
function op(start: unknown, operator: string, parameter?: unknown, outputs: Record<string, Outputs> = {}, globals: Record<string, unknown> = {}): unknown {
  return assign([{ variable: 'env.v', operator, parameter }], outputs, { ...globals, 'env.v': start }).globals['env.v'];
}

describe('agents: transform components', () => {
  describe('VariableAssigner', () => {
    describe('overwrite', () => {
      it('takes the raw value of the reference in parameter (type kept)', () => {
        assert.deepEqual(op('old', 'overwrite', '{cpn@items}', { cpn: { items: [1, 2] } }), [1, 2]);
        assert.equal(op([1], 'overwrite', 'sys.query', {}, { 'sys.query': 'hi' }), 'hi', 'braces optional');
        assert.deepEqual(op('x', 'overwrite', '{cpn@data.a.b}', { cpn: { data: { a: { b: { c: 1 } } } } }), { c: 1 }, 'dotted paths walk in');
      });

      it('stores a copy: changing the source later does not change the variable', () => {
        const outputs = { cpn: { items: [{ a: 1 }] } };
        const { assignments } = assign([{ variable: 'env.v', operator: 'overwrite', parameter: '{cpn@items}' }], outputs, { 'env.v': null });
        assert.notEqual(assignments[0]!.value, outputs.cpn.items);
        assert.deepEqual(assignments[0]!.value, [{ a: 1 }]);
      });

      it('a parameter that names no variable fails like RAGFlow ("Can\'t find variable")', () => {
        assert.throws(() => op('x', 'overwrite', 'env.nope'), /Can't find variable: 'env\.nope'/);
        assert.throws(() => op('x', 'overwrite', 'plain text'), /Can't find variable/);
        assert.throws(() => op('x', 'overwrite', '{Nope@x}'), /Can't find variable: 'Nope@x'/);
      });

      it('a component output that has not been produced overwrites with null', () => {
        assert.equal(op('x', 'overwrite', '{cpn@missing}', { cpn: {} }), null);
      });

      it('a non-text parameter is taken as it is', () => {
        assert.equal(op('x', 'overwrite', 5), 5);
      });
    });

    describe('clear', () => {
      it("gives the empty value of the variable's type, without a parameter", () => {
        assert.deepEqual(op([1, 2], 'clear'), []);
        assert.equal(op('text', 'clear'), '');
        assert.deepEqual(op({ a: 1 }, 'clear'), {});
        assert.equal(op(true, 'clear'), false);
        assert.equal(op(3.5, 'clear'), 0);
        assert.equal(op(null, 'clear'), null);
      });
    });

    describe('set', () => {
      it('on a text or null variable renders parameter as a template (references substituted)', () => {
        assert.equal(op('old', 'set', 'Hi {sys.user}!', {}, { 'sys.user': 'Ann' }), 'Hi Ann!');
        assert.equal(op(null, 'set', 'n={cpn@n}', { cpn: { n: 3 } }), 'n=3');
        assert.equal(op('old', 'set', '{cpn@list}', { cpn: { list: [1, 'a'] } }), '[1,"a"]', 'a template renders to text');
      });

      it("on a number, boolean or object variable takes the parameter, read as the variable's type", () => {
        assert.equal(op(1, 'set', 42), 42);
        assert.equal(op(1, 'set', '42.5'), 42.5, 'numeric text from the editor');
        assert.equal(op(false, 'set', 'yes'), true, "the editor's boolean radio writes yes/no");
        assert.equal(op(true, 'set', 'no'), false);
        assert.equal(op(true, 'set', false), false);
        assert.deepEqual(op({}, 'set', '{"a": 1}'), { a: 1 }, "the editor's object editor writes JSON text");
        assert.equal(op({}, 'set', 'not json'), 'not json', 'text that does not read as the type stays text');
        assert.equal(op(1, 'set', 'many'), 'many');
      });
    });

    describe('append', () => {
      it('adds the value of the reference in parameter to the list', () => {
        assert.deepEqual(op(['a'], 'append', '{cpn@x}', { cpn: { x: 'b' } }), ['a', 'b']);
        assert.deepEqual(op([{ k: 1 }], 'append', '{cpn@o}', { cpn: { o: { k: 2 } } }), [{ k: 1 }, { k: 2 }]);
      });

      it('a null variable counts as an empty list; an empty list takes any type', () => {
        assert.deepEqual(op(null, 'append', '{cpn@x}', { cpn: { x: 1 } }), [1]);
        assert.deepEqual(op([], 'append', '{cpn@x}', { cpn: { x: { a: 1 } } }), [{ a: 1 }]);
      });

      it('a variable that is not a list gets ERROR:VARIABLE_NOT_LIST', () => {
        assert.equal(op('text', 'append', '{cpn@x}', { cpn: { x: 'b' } }), ERR_VARIABLE_NOT_LIST);
        assert.equal(ERR_VARIABLE_NOT_LIST, 'ERROR:VARIABLE_NOT_LIST');
      });

      it("a value of another type than the list's first element gets ERROR:PARAMETER_NOT_LIST_ELEMENT_TYPE", () => {
        assert.equal(op(['a'], 'append', '{cpn@x}', { cpn: { x: 1 } }), ERR_PARAMETER_NOT_LIST_ELEMENT_TYPE);
        assert.equal(op([1], 'append', '{cpn@x}', { cpn: { x: true } }), ERR_PARAMETER_NOT_LIST_ELEMENT_TYPE);
        assert.deepEqual(op([1], 'append', '{cpn@x}', { cpn: { x: 2.5 } }), [1, 2.5], 'int and float are one type (JSON cannot tell them apart)');
      });
    });

    describe('extend', () => {
      it('appends the list the reference names', () => {
        assert.deepEqual(op([1], 'extend', '{cpn@l}', { cpn: { l: [2, 3] } }), [1, 2, 3]);
        assert.deepEqual(op(null, 'extend', '{cpn@l}', { cpn: { l: ['a'] } }), ['a']);
        assert.deepEqual(op(['a'], 'extend', '{cpn@l}', { cpn: { l: [] } }), ['a'], 'an empty list adds nothing');
      });

      it('type errors: variable not a list, parameter not a list, element types differ', () => {
        assert.equal(op({}, 'extend', '{cpn@l}', { cpn: { l: [1] } }), ERR_VARIABLE_NOT_LIST);
        assert.equal(op([1], 'extend', '{cpn@l}', { cpn: { l: 'abc' } }), ERR_PARAMETER_NOT_LIST);
        assert.equal(ERR_PARAMETER_NOT_LIST, 'ERROR:PARAMETER_NOT_LIST');
        assert.equal(op([1], 'extend', '{cpn@l}', { cpn: { l: ['x'] } }), ERR_PARAMETER_NOT_LIST_ELEMENT_TYPE);
      });
    });

    describe('remove_first / remove_last', () => {
      it('drop the first / last element; an empty list stays empty', () => {
        assert.deepEqual(op([1, 2, 3], 'remove_first'), [2, 3]);
        assert.deepEqual(op([1, 2, 3], 'remove_last'), [1, 2]);
        assert.deepEqual(op([], 'remove_first'), []);
        assert.deepEqual(op([], 'remove_last'), []);
      });

      it('a variable that is not a list (null included) gets ERROR:VARIABLE_NOT_LIST', () => {
        assert.equal(op('abc', 'remove_first'), ERR_VARIABLE_NOT_LIST);
        assert.equal(op(null, 'remove_last'), ERR_VARIABLE_NOT_LIST);
      });
    });

    describe('+= -= *= /=', () => {
      it('do number arithmetic with a number parameter', () => {
        assert.equal(op(5, '+=', 2), 7);
        assert.equal(op(5, '-=', 2), 3);
        assert.equal(op(5, '*=', 2), 10);
        assert.equal(op(5, '/=', 2), 2.5, 'true division, as Python');
        assert.equal(op(0.1, '+=', 0.2), 0.1 + 0.2);
      });

      it('also take numeric text and a reference to a number', () => {
        assert.equal(op(5, '+=', '3'), 8);
        assert.equal(op(5, '*=', '{cpn@n}', { cpn: { n: 4 } }), 20);
      });

      it('a variable or parameter that is not a number (booleans included) gets the ERROR text', () => {
        assert.equal(op('5', '+=', 1), ERR_NOT_NUMBER, 'a text variable is not a number');
        assert.equal(op(true, '+=', 1), ERR_NOT_NUMBER);
        assert.equal(op(null, '-=', 1), ERR_NOT_NUMBER);
        assert.equal(op(5, '*=', 'x'), ERR_NOT_NUMBER);
        assert.equal(op(5, '+=', true), ERR_NOT_NUMBER);
        assert.equal(op(5, '+=', '{cpn@s}', { cpn: { s: 'abc' } }), ERR_NOT_NUMBER);
        assert.equal(ERR_NOT_NUMBER, 'ERROR:VARIABLE_NOT_NUMBER or PARAMETER_NOT_NUMBER');
      });

      it('dividing by zero gets ERROR:DIVIDE_BY_ZERO', () => {
        assert.equal(op(5, '/=', 0), ERR_DIVIDE_BY_ZERO);
        assert.equal(ERR_DIVIDE_BY_ZERO, 'ERROR:DIVIDE_BY_ZERO');
      });
    });

    describe('rows, targets and failures', () => {
      it('every RAGFlow operator is handled', () => {
        assert.deepEqual([...VARIABLE_ASSIGNER_OPERATORS], ['overwrite', 'clear', 'set', 'append', 'extend', 'remove_first', 'remove_last', '+=', '-=', '*=', '/=']);
      });

      it('rows apply in order: a row reads what the rows before it wrote', () => {
        const { globals, assignments } = assign(
          [
            { variable: 'env.n', operator: '+=', parameter: 1 },
            { variable: '{env.n}', operator: '*=', parameter: 10 },
            { variable: 'env.log', operator: 'overwrite', parameter: 'env.n' },
            { variable: 'env.list', operator: 'append', parameter: 'env.n' },
            { variable: 'env.list', operator: 'append', parameter: 'env.n' },
          ],
          {},
          { 'env.n': 1, 'env.log': '', 'env.list': [] },
        );
        assert.equal(globals['env.n'], 20);
        assert.equal(globals['env.log'], 20);
        assert.deepEqual(globals['env.list'], [20, 20]);
        assert.deepEqual(
          assignments.map((a) => a.target),
          ['env.n', 'env.n', 'env.log', 'env.list', 'env.list'],
          'targets come back without braces',
        );
      });

      it('assignVariables itself changes nothing: the scope it reads is left as it was', () => {
        const globals = { 'env.n': 1 };
        const outputs: Record<string, Outputs> = { cpn: { out: { a: 1 } } };
        assignVariables({ variables: [{ variable: 'env.n', operator: '+=', parameter: 1 }, { variable: 'cpn@out.b', operator: 'set', parameter: 2 }] }, scope(outputs, globals));
        assert.deepEqual(globals, { 'env.n': 1 });
        assert.deepEqual(outputs, { cpn: { out: { a: 1 } } });
      });

      it('writes component outputs, nested keys included (created on the way)', () => {
        const { outputs } = assign(
          [
            { variable: 'cpn@out', operator: 'overwrite', parameter: 'sys.query' },
            { variable: '{cpn@data.a.b}', operator: 'set', parameter: 7 },
            { variable: 'cpn@data.a.c', operator: 'set', parameter: 'x' },
          ],
          { cpn: { out: 'old', data: null } },
          { 'sys.query': 'q' },
        );
        assert.deepEqual(outputs.cpn, { out: 'q', data: { a: { b: 7, c: 'x' } } });
      });

      it('the number of rows and their errors: "Variable is not complete." for an unfinished row', () => {
        assert.throws(() => assign([{ variable: '', operator: 'clear' }], {}, {}), /^Error: Variable is not complete\.$/);
        assert.throws(() => assign([{ variable: 'env.v', parameter: 1 }], {}, { 'env.v': 1 }), /Variable is not complete/);
        assert.throws(() => assign([{ variable: 'env.v', operator: '+=' }], {}, { 'env.v': 1 }), /Variable is not complete/);
        assert.throws(() => assign([{ variable: 'env.v', operator: 'set', parameter: null }], {}, { 'env.v': 1 }), /Variable is not complete/);
        assert.throws(() => assign(['not a row'], {}, {}), /Variable is not complete/);
        assert.doesNotThrow(() => assign([{ variable: 'env.v', operator: 'remove_last' }], {}, { 'env.v': [] }), 'no parameter needed');
      });

      it('an unknown variable fails the component and nothing is written', () => {
        assert.throws(() => assign([{ variable: 'env.missing', operator: 'clear' }]), /Can't find variable: 'env\.missing'/);
        assert.throws(() => assign([{ variable: 'Nope@x', operator: 'clear' }]), /Can't find variable: 'Nope@x'/);
        const globals = { 'env.a': 1 };
        assert.throws(() =>
          assignVariables({ variables: [{ variable: 'env.a', operator: '+=', parameter: 1 }, { variable: 'env.b', operator: 'clear' }] }, scope({}, globals)),
        );
        assert.deepEqual(globals, { 'env.a': 1 }, 'all rows or none');
      });

      it('an operator RAGFlow does not know fails', () => {
        assert.throws(() => op(1, '%=', 2), /Not supported operator: %=/);
      });

      it('variables that is not a list, or an empty list, assigns nothing', () => {
        assert.deepEqual(assignVariables({}, scope({})), []);
        assert.deepEqual(assignVariables({ variables: 'x' }, scope({})), []);
        assert.deepEqual(assignVariables({ variables: [] }, scope({})), []);
      });
    });

    describe('applyAssignment', () => {
      it('sets a global by its reference, braces and SYS./ENV. case tolerated', () => {
        const globals: Record<string, unknown> = { 'env.x': 1 };
        applyAssignment(globals, {}, '{ENV.x}', 2);
        assert.deepEqual(globals, { 'env.x': 2 });
      });

      it('sets a key inside a global object for a dotted name that starts with a global', () => {
        const cfg = { a: { keep: true } };
        const globals: Record<string, unknown> = { 'env.cfg': cfg };
        applyAssignment(globals, {}, 'env.cfg.a.b', 1);
        assert.deepEqual(globals['env.cfg'], { a: { keep: true, b: 1 } });
        assert.deepEqual(cfg, { a: { keep: true } }, 'copy on write: the old object is not changed');
      });

      it('a name that is no global and starts with none is set as a new global (RAGFlow)', () => {
        const globals: Record<string, unknown> = {};
        applyAssignment(globals, {}, 'env.new', 'v');
        assert.deepEqual(globals, { 'env.new': 'v' });
      });

      it('creates the outputs of a component that has not run', () => {
        const outputs: Record<string, Outputs> = {};
        applyAssignment({}, outputs, 'cpn@a.b.c', 1);
        assert.deepEqual(outputs, { cpn: { a: { b: { c: 1 } } } });
      });

      it('replaces objects on the path instead of mutating them, keeping their other keys', () => {
        const before = { a: { b: 1, c: 2 }, d: 3 };
        const outputs: Record<string, Outputs> = { cpn: { out: before, other: 'kept' } };
        applyAssignment({}, outputs, 'cpn@out.a.b', 9);
        assert.deepEqual(outputs.cpn, { out: { a: { b: 9, c: 2 }, d: 3 }, other: 'kept' });
        assert.deepEqual(before, { a: { b: 1, c: 2 }, d: 3 });
      });

      it('a key on the way that holds no object is replaced by one (RAGFlow)', () => {
        const outputs: Record<string, Outputs> = { cpn: { out: { a: 'text' } } };
        applyAssignment({}, outputs, 'cpn@out.a.b', 1);
        assert.deepEqual(outputs.cpn!.out, { a: { b: 1 } });
      });

      it('an output holding JSON object text is read as that object', () => {
        const outputs: Record<string, Outputs> = { cpn: { out: '{"a": 1}' } };
        applyAssignment({}, outputs, 'cpn@out.b', 2);
        assert.deepEqual(outputs.cpn!.out, { a: 1, b: 2 });
      });

      it('a __proto__ key is an ordinary key (no prototype is changed)', () => {
        const outputs: Record<string, Outputs> = {};
        applyAssignment({}, outputs, 'cpn@out.__proto__.polluted', 1);
        assert.deepEqual(Object.keys(outputs.cpn!.out as object), ['__proto__']);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(Object.getPrototypeOf(outputs.cpn!.out), Object.prototype);
      });

      it('an output holding a list or other non-object cannot take a key: it fails', () => {
        assert.throws(() => applyAssignment({}, { cpn: { out: [1, 2] } }, 'cpn@out.0', 1), /Can't set 'cpn@out\.0': the value it goes into is a list, not an object/);
        assert.throws(() => applyAssignment({}, { cpn: { out: 5 } }, 'cpn@out.a', 1), /is an int, not an object/);
      });
    });
  });

  describe('StringTransform', () => {
    const text = (t: unknown) => scope({ cpn: { t } });

    describe('split', () => {
      it('splits the referenced text at the delimiters (default ","), keeping empty pieces', () => {
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}' }, text('a,b,,c,')), { result: ['a', 'b', '', 'c', ''] });
        assert.deepEqual(stringTransform({ method: 'split', split_ref: 'cpn@t', delimiters: [';', '\n'] }, text('a;b\nc')).result, ['a', 'b', 'c'], 'braces optional');
      });

      it('delimiters are literal text, not patterns; the first listed wins where two match', () => {
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}', delimiters: ['.', '|'] }, text('a.b|c')).result, ['a', 'b', 'c']);
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}', delimiters: ['-', '--'] }, text('a--b')).result, ['a', '', 'b']);
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}', delimiters: ['--', '-'] }, text('a--b-c')).result, ['a', 'b', 'c']);
      });

      it('a delimiters string counts each of its characters as a delimiter (RAGFlow)', () => {
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}', delimiters: ',;' }, text('a,b;c')).result, ['a', 'b', 'c']);
      });

      it('a text without delimiters is one piece', () => {
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}' }, text('abc')).result, ['abc']);
      });

      it('a missing value (null, "", an output not produced) splits to [""]', () => {
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}' }, text(null)).result, ['']);
        assert.deepEqual(stringTransform({ split_ref: '{cpn@t}' }, text('')).result, ['']);
        assert.deepEqual(stringTransform({ split_ref: '{cpn@nothing}' }, text('x')).result, ['']);
      });

      it('a value that is not text fails with RAGFlow\'s message', () => {
        assert.throws(() => stringTransform({ split_ref: '{cpn@t}' }, text(['a'])), /^Error: The input variable is not a string: <class 'list'>$/);
        assert.throws(() => stringTransform({ split_ref: '{cpn@t}' }, text(12)), /<class 'int'>/);
      });

      it('an unknown component fails; an empty split_ref fails clearly', () => {
        assert.throws(() => stringTransform({ split_ref: '{Nope@t}' }, text('a')), /Can't find variable: 'Nope@t'/);
        assert.throws(() => stringTransform({ split_ref: '' }, text('a')), /'split_ref' is empty/);
      });
    });

    describe('merge', () => {
      const s = scope({ a: { name: 'Ann', tags: ['x', 'y', 3, true, null], n: 2, obj: { k: 'v' }, none: null } }, { 'sys.query': 'Q', 'env.lang': 'en' });

      it('substitutes the references in script', () => {
        assert.deepEqual(stringTransform({ method: 'merge', script: 'Hi {a@name} ({sys.query}, {env.lang}) n={a@n}' }, s), { result: 'Hi Ann (Q, en) n=2' });
      });

      it("joins a list with the first delimiter, items as Python's str()", () => {
        assert.equal(stringTransform({ method: 'merge', script: '[{a@tags}]', delimiters: [' | ', ','] }, s).result, '[x | y | 3 | True | None]');
        assert.equal(stringTransform({ method: 'merge', script: '{a@tags}' }, s).result, 'x,y,3,True,None', 'default delimiter ","');
      });

      it('null renders as "", an object as JSON', () => {
        assert.equal(stringTransform({ method: 'merge', script: '<{a@none}>{a@obj}' }, s).result, '<>{"k":"v"}');
      });

      it('a script without references is returned as it is; an empty script gives ""', () => {
        assert.equal(stringTransform({ method: 'merge', script: 'plain {not a ref}' }, s).result, 'plain {not a ref}');
        assert.equal(stringTransform({ method: 'merge' }, s).result, '');
      });

      it('{{cpn@out}} is a reference (extra braces tolerated)', () => {
        assert.equal(stringTransform({ method: 'merge', script: 'Hi {{a@name}}' }, s).result, 'Hi Ann');
      });

      it('Jinja statements are not supported: they fail with a clear message', () => {
        assert.throws(() => stringTransform({ method: 'merge', script: '{% for t in a_tags %}{{ t }}{% endfor %}' }, s), /Jinja templates are not supported/);
        assert.throws(() => stringTransform({ method: 'merge', script: 'Hi {{ name }}' }, s), /Jinja templates are not supported \(found '\{\{ name \}\}'\)/);
      });

      it('an unknown component in script fails', () => {
        assert.throws(() => stringTransform({ method: 'merge', script: '{Nope@x}' }, s), /Can't find variable: 'Nope@x'/);
      });
    });

    it('an unknown method fails', () => {
      assert.throws(() => stringTransform({ method: 'reverse' }, scope({})), /unsupported method 'reverse'/);
    });
  });

  describe('DataOperations', () => {
    const people = [
      { name: 'Ann', age: 31, city: 'Oslo' },
      { name: 'Bob', age: 25, city: 'Rome' },
    ];
    const s = scope({ src: { people, one: { name: 'Cid', age: 40 }, text: 'x', nums: [1, 2], none: null }, idle: {} }, { 'sys.query': 'Rome' });
    const run = (params: Record<string, unknown>) => dataOperations({ query: ['{src@people}'], ...params }, s).result;

    describe('inputs', () => {
      it('takes the objects the query references name: an object, or the objects in a list', () => {
        assert.deepEqual(dataOperations({ operations: 'select_keys', select_keys: ['name'], query: ['{src@people}', 'src@one'] }, s).result, [{ name: 'Ann' }, { name: 'Bob' }, { name: 'Cid' }]);
      });

      it('skips values that are not objects (text, numbers, null, outputs not produced)', () => {
        assert.deepEqual(dataOperations({ operations: 'select_keys', select_keys: ['name'], query: ['{src@text}', '{src@nums}', '{src@none}', '{idle@x}'] }, s).result, []);
      });

      it('one reference as a string is accepted; no query gives []', () => {
        assert.deepEqual(dataOperations({ operations: 'remove_keys', query: '{src@one}' }, s).result, [{ name: 'Cid', age: 40 }]);
        assert.deepEqual(dataOperations({ operations: 'remove_keys' }, s).result, []);
      });

      it('an unknown component fails', () => {
        assert.throws(() => dataOperations({ query: ['{Nope@x}'] }, s), /Can't find variable: 'Nope@x'/);
      });

      it('never changes its inputs', () => {
        run({ operations: 'append_or_update', updates: [{ key: 'name', value: 'Z' }] });
        run({ operations: 'combine' });
        run({ operations: 'rename_keys', rename_keys: [{ old_key: 'name', new_key: 'who' }] });
        assert.deepEqual(people, [
          { name: 'Ann', age: 31, city: 'Oslo' },
          { name: 'Bob', age: 25, city: 'Rome' },
        ]);
      });

      it('an unknown operation fails', () => {
        assert.throws(() => run({ operations: 'explode' }), /unsupported operation 'explode'/);
      });
    });

    it('select_keys keeps only the listed keys, in each object\'s own order', () => {
      assert.deepEqual(run({ operations: 'select_keys', select_keys: ['city', 'name', 'absent'] }), [
        { name: 'Ann', city: 'Oslo' },
        { name: 'Bob', city: 'Rome' },
      ]);
      assert.deepEqual(run({ operations: 'select_keys' }), [{}, {}], 'no keys keeps none');
    });

    describe('literal_eval (the default operation)', () => {
      const evalOne = (v: unknown) => (dataOperations({ query: '{c@o}' }, scope({ c: { o: { v } } })).result as { v: unknown }[])[0]!.v;

      it('parses text that is a Python literal, deep in objects and lists', () => {
        assert.deepEqual(evalOne("[1, 'a', None, True]"), [1, 'a', null, true]);
        assert.deepEqual(evalOne("{'k': (1, 2), 'n': {'x': -1.5e2}}"), { k: [1, 2], n: { x: -150 } });
        assert.equal(evalOne('12'), 12);
        assert.equal(evalOne(' 1.5 '), 1.5);
        assert.equal(evalOne('True'), true);
        assert.equal(evalOne('None'), null);
        assert.equal(evalOne("'quoted'"), 'quoted');
        assert.deepEqual(evalOne({ deep: ['[1]', "{'a': 'b'}"] }), { deep: [[1], { a: 'b' }] });
      });

      it('keeps text that is not a literal, or that only looks like one', () => {
        assert.equal(evalOne('hello'), 'hello');
        assert.equal(evalOne('true'), 'true', 'lower-case true is no Python literal');
        assert.equal(evalOne('007'), '007', 'leading zeros are a SyntaxError in Python');
        assert.equal(evalOne('1.2.3'), '1.2.3');
        assert.equal(evalOne('-5'), '-5', 'RAGFlow only tries text starting with a digit, a bracket or a quote');
        assert.equal(evalOne('[1, 2'), '[1, 2');
        assert.equal(evalOne("{'a': f(1)}"), "{'a': f(1)}");
      });

      it('also parses JSON that is no Python literal (true / null inside)', () => {
        assert.deepEqual(evalOne('{"a": true, "b": null}'), { a: true, b: null });
      });

      it('non-text values pass through', () => {
        assert.equal(evalOne(5), 5);
        assert.equal(evalOne(null), null);
      });
    });

    it('combine merges all objects into one; a key met again collects its values in a list', () => {
      const s2 = scope({ c: { list: [{ a: 1, b: [1] }, { a: 2, b: 2, c: 'x' }, { a: [3, 4], b: [3] }] } });
      assert.deepEqual(dataOperations({ operations: 'combine', query: ['{c@list}'] }, s2).result, { a: [1, 2, 3, 4], b: [1, 2, 3], c: 'x' });
      assert.deepEqual(dataOperations({ operations: 'combine', query: [] }, s2).result, {}, 'no objects: {}');
    });

    describe('filter_values', () => {
      it('keeps the objects for which every rule holds (=, ≠, contains, start with, end with)', () => {
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'city', operator: '=', value: 'Rome' }] }), [people[1]]);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'city', operator: '≠', value: 'Rome' }] }), [people[0]]);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'name', operator: 'contains', value: 'n' }] }), [people[0]]);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'name', operator: 'start with', value: 'B' }] }), [people[1]]);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'city', operator: 'end with', value: 'lo' }] }), [people[0]]);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'name', operator: 'contains', value: 'a' }] }), [], 'case-sensitive');
        assert.deepEqual(
          run({ operations: 'filter_values', filter_values: [{ key: 'name', operator: 'contains', value: 'n' }, { key: 'age', operator: '=', value: '25' }] }),
          [],
          'all rules must hold',
        );
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'name', operator: 'contains', value: 'o' }, { key: 'age', operator: '=', value: '25' }] }), [people[1]]);
      });

      it("compares str() of the value with the rendered rule value (references substituted)", () => {
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'age', operator: '=', value: 31 }] }), [people[0]]);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'city', operator: '=', value: '{sys.query}' }] }), [people[1]]);
        const flags = scope({ c: { l: [{ ok: true }, { ok: false }] } });
        assert.deepEqual(dataOperations({ operations: 'filter_values', query: '{c@l}', filter_values: [{ key: 'ok', operator: '=', value: 'True' }] }, flags).result, [{ ok: true }]);
      });

      it('a missing key fails its rule; an unknown operator never holds; an empty one means =; no rules keeps all', () => {
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'zip', operator: '≠', value: 'x' }] }), []);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'city', operator: '>', value: 'A' }] }), []);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [{ key: 'city', value: 'Oslo' }] }), [people[0]]);
        assert.deepEqual(run({ operations: 'filter_values', filter_values: [] }), people);
      });
    });

    it('append_or_update sets each update on every object; values are templates; empty keys are skipped', () => {
      assert.deepEqual(
        run({
          operations: 'append_or_update',
          updates: [
            { key: 'city', value: 'Paris' },
            { key: ' q ', value: 'asked: {sys.query}' },
            { key: '', value: 'ignored' },
            { key: 'n', value: 3 },
          ],
        }),
        [
          { name: 'Ann', age: 31, city: 'Paris', q: 'asked: Rome', n: 3 },
          { name: 'Bob', age: 25, city: 'Paris', q: 'asked: Rome', n: 3 },
        ],
      );
    });

    it('remove_keys drops the listed keys (absent keys are fine)', () => {
      assert.deepEqual(run({ operations: 'remove_keys', remove_keys: ['age', 'zip'] }), [
        { name: 'Ann', city: 'Oslo' },
        { name: 'Bob', city: 'Rome' },
      ]);
    });

    it('rename_keys renames old_key to new_key (moved last); empty, identical or absent names are skipped', () => {
      const out = run({
        operations: 'rename_keys',
        rename_keys: [
          { old_key: ' name ', new_key: 'who' },
          { old_key: 'age', new_key: 'age' },
          { old_key: 'zip', new_key: 'code' },
          { old_key: '', new_key: 'x' },
        ],
      }) as Record<string, unknown>[];
      assert.deepEqual(out, [
        { age: 31, city: 'Oslo', who: 'Ann' },
        { age: 25, city: 'Rome', who: 'Bob' },
      ]);
      assert.deepEqual(Object.keys(out[0]!), ['age', 'city', 'who']);
    });
  });

  describe('ListOperations', () => {
    const s = scope({ src: { nums: [3, 1, 2], words: ['pear', 'Apple', 'fig', 'apple'], empty: [], text: 'abc' } }, { 'env.w': 'ap' });
    const run = (params: Record<string, unknown>, query = '{src@nums}') => listOperations({ query, ...params }, s);

    describe('nth', () => {
      it('gives [item n], 1-based, with first and last', () => {
        assert.deepEqual(run({ operations: 'nth', n: 2 }), { result: [1], first: 1, last: 1 });
        assert.deepEqual(run({ n: 1 }).result, [3], 'nth is the default operation');
      });

      it('negative n counts from the end', () => {
        assert.deepEqual(run({ operations: 'nth', n: -1 }).result, [2]);
        assert.deepEqual(run({ operations: 'nth', n: -3 }).result, [3]);
      });

      it('n = 0 or out of range gives [] (first / last null), or fails with strict', () => {
        assert.deepEqual(run({ operations: 'nth', n: 0 }), { result: [], first: null, last: null });
        assert.deepEqual(run({ operations: 'nth', n: 4 }).result, []);
        assert.deepEqual(run({ operations: 'nth', n: -4 }).result, []);
        assert.throws(() => run({ operations: 'nth', n: 4, strict: true }), /^Error: nth requires n to be within the valid range in strict mode, got 4\.$/);
        assert.throws(() => run({ operations: 'nth', n: 0, strict: 'yes' }), /got 0/);
      });

      it('n may be numeric text; unreadable n counts as 0', () => {
        assert.deepEqual(run({ operations: 'nth', n: '3' }).result, [2]);
        assert.deepEqual(run({ operations: 'nth', n: 'two' }).result, []);
      });
    });

    describe('head (topN) / tail', () => {
      it('give the first / last n items', () => {
        assert.deepEqual(run({ operations: 'head', n: 2 }), { result: [3, 1], first: 3, last: 1 });
        assert.deepEqual(run({ operations: 'topN', n: 2 }).result, [3, 1], 'topN is head');
        assert.deepEqual(run({ operations: 'tail', n: 2 }).result, [1, 2]);
      });

      it('n beyond the length gives the whole list; n < 1 gives []', () => {
        assert.deepEqual(run({ operations: 'head', n: 10 }).result, [3, 1, 2]);
        assert.deepEqual(run({ operations: 'tail', n: 10 }).result, [3, 1, 2]);
        assert.deepEqual(run({ operations: 'head', n: 0 }).result, []);
        assert.deepEqual(run({ operations: 'tail', n: -1 }).result, []);
      });

      it('with strict, n must be within 1..length', () => {
        assert.throws(() => run({ operations: 'head', n: 4, strict: true }), /head requires n/);
        assert.throws(() => run({ operations: 'tail', n: 0, strict: true }), /tail requires n/);
        assert.deepEqual(run({ operations: 'tail', n: 3, strict: true }).result, [3, 1, 2]);
      });
    });

    describe('filter', () => {
      const words = (operator: string, value: unknown) => run({ operations: 'filter', filter: { operator, value } }, '{src@words}').result;

      it('keeps the items whose text compares true (=, ≠, contains, start with, end with; case-sensitive)', () => {
        assert.deepEqual(words('=', 'fig'), ['fig']);
        assert.deepEqual(words('≠', 'fig'), ['pear', 'Apple', 'apple']);
        assert.deepEqual(words('contains', 'pp'), ['Apple', 'apple']);
        assert.deepEqual(words('start with', 'a'), ['apple']);
        assert.deepEqual(words('end with', 'r'), ['pear']);
      });

      it('the filter value may hold references', () => {
        assert.deepEqual(words('start with', '{env.w}'), ['apple']);
      });

      it("compares numbers and booleans as Python's str()", () => {
        const mixed = scope({ c: { l: [1, 10, true, null, 'True'] } });
        assert.deepEqual(listOperations({ query: '{c@l}', operations: 'filter', filter: { operator: '=', value: 'True' } }, mixed).result, [true, 'True']);
        assert.deepEqual(listOperations({ query: '{c@l}', operations: 'filter', filter: { operator: 'start with', value: 1 } }, mixed).result, [1, 10]);
      });

      it('an unknown operator keeps nothing', () => {
        assert.deepEqual(words('>', 'a'), []);
      });
    });

    describe('sort', () => {
      it('sorts values ascending by default, descending with sort_method desc', () => {
        assert.deepEqual(run({ operations: 'sort' }), { result: [1, 2, 3], first: 1, last: 3 });
        assert.deepEqual(run({ operations: 'sort', sort_method: 'desc' }).result, [3, 2, 1]);
        assert.deepEqual(run({ operations: 'sort' }, '{src@words}').result, ['Apple', 'apple', 'fig', 'pear'], 'text by code point');
      });

      it('sorts objects by the sort_by keys (primary, then tie-break), a missing key first', () => {
        const rows = [
          { n: 'c', g: 2, t: 1 },
          { n: 'a', g: 1, t: 2 },
          { n: 'b', g: 2, t: 0 },
          { n: 'd', t: 5 },
        ];
        const rs = scope({ c: { rows } });
        const names = (params: Record<string, unknown>) => (listOperations({ query: '{c@rows}', operations: 'sort', ...params }, rs).result as { n: string }[]).map((r) => r.n);
        assert.deepEqual(names({ sort_by: 'g, t' }), ['d', 'a', 'b', 'c']);
        assert.deepEqual(names({ sort_by: ['g', 't'], sort_method: 'desc' }), ['c', 'b', 'a', 'd']);
        assert.deepEqual(names({}), ['a', 'b', 'c', 'd'], "without sort_by: by the objects' sorted key/value pairs");
      });

      it('is stable in both directions', () => {
        const rows = [{ k: 1, id: 'x' }, { k: 0, id: 'y' }, { k: 1, id: 'z' }];
        const rs = scope({ c: { rows } });
        const ids = (sort_method: string) => (listOperations({ query: '{c@rows}', operations: 'sort', sort_by: 'k', sort_method }, rs).result as { id: string }[]).map((r) => r.id);
        assert.deepEqual(ids('asc'), ['y', 'x', 'z']);
        assert.deepEqual(ids('desc'), ['x', 'z', 'y']);
      });

      it('orders mixed types instead of failing: null < numbers and booleans < text < lists < objects', () => {
        const ms = scope({ c: { l: ['b', 2, null, [1], { a: 1 }, true, 'a', 0.5] } });
        assert.deepEqual(listOperations({ query: '{c@l}', operations: 'sort' }, ms).result, [null, 0.5, true, 2, 'a', 'b', [1], { a: 1 }]);
        assert.equal(pyCompare([1, 2], [1, 2, 0]), -1, 'lists compare element by element, shorter first');
      });

      it('an empty list sorts to []', () => {
        assert.deepEqual(run({ operations: 'sort' }, '{src@empty}'), { result: [], first: null, last: null });
      });
    });

    it('drop_duplicates keeps first occurrences; objects are equal whatever their key order', () => {
      const ds = scope({ c: { l: [1, 'a', 1, { x: 1, y: 2 }, { y: 2, x: 1 }, [1], [1], 'a', '1'] } });
      assert.deepEqual(listOperations({ query: '{c@l}', operations: 'drop_duplicates' }, ds), { result: [1, 'a', { x: 1, y: 2 }, [1], '1'], first: 1, last: '1' });
    });

    it('does not change the input list', () => {
      const l = [3, 1, 2];
      listOperations({ query: '{c@l}', operations: 'sort' }, scope({ c: { l } }));
      assert.deepEqual(l, [3, 1, 2]);
    });

    it('an input that is not a list fails with RAGFlow\'s message', () => {
      assert.throws(() => run({}, '{src@text}'), /^Error: The input of List Operations should be an array\.$/);
      assert.throws(() => run({}, '{src@missing}'), /should be an array/, 'an output not produced is null, not a list');
    });

    it('an unknown component, an empty query or an unknown operation fails', () => {
      assert.throws(() => run({}, '{Nope@x}'), /Can't find variable: 'Nope@x'/);
      assert.throws(() => run({}, ''), /'query' is empty/);
      assert.throws(() => run({ operations: 'shuffle' }), /unsupported operation 'shuffle'/);
    });
  });

  describe('Python literals and values', () => {
    it('parses strings with escapes, raw strings, triple quotes and adjacent literals', () => {
      assert.deepEqual(parsePythonLiteral(String.raw`'a\n\t\'b\x41\u00e9\101'`), { ok: true, value: "a\n\t'bAé" + 'A' });
      assert.deepEqual(parsePythonLiteral(String.raw`r'a\n'`), { ok: true, value: 'a\\n' });
      assert.deepEqual(parsePythonLiteral(`'''x\n'y'''`), { ok: true, value: "x\n'y" });
      assert.deepEqual(parsePythonLiteral(`'a' "b"`), { ok: true, value: 'ab' });
      assert.deepEqual(parsePythonLiteral(`'a\nb'`), { ok: false }, 'a newline inside a one-line string');
    });

    it('parses numbers: ints in every base, underscores, floats, one sign', () => {
      assert.deepEqual(parsePythonLiteral('[0x1F, 0o17, 0b101, 1_000, 1., .5, 2e3, -7, +3]'), { ok: true, value: [31, 15, 5, 1000, 1, 0.5, 2000, -7, 3] });
      assert.deepEqual(parsePythonLiteral('1j'), { ok: false }, 'complex numbers are not JSON');
      assert.deepEqual(parsePythonLiteral('012'), { ok: false });
    });

    it('parses containers: tuples and sets become lists, dict keys become text', () => {
      assert.deepEqual(parsePythonLiteral("((1,), (), (2), {1, 2, 1}, {1: 'a', None: 'b'}, [1, 2,])"), {
        ok: true,
        value: [[1], [], 2, [1, 2], { '1': 'a', null: 'b' }, [1, 2]],
      });
      assert.deepEqual(parsePythonLiteral('{[1]: 2}'), { ok: false }, 'unhashable key');
      assert.deepEqual(parsePythonLiteral("{'a' 1}"), { ok: false });
      assert.deepEqual(parsePythonLiteral("b'x'"), { ok: false }, 'bytes');
    });

    it("renders values as Python's repr()", () => {
      assert.equal(pyRepr({ a: [1, true, null, "it's"] }), `{'a': [1, True, None, "it's"]}`);
    });
  });

  describe('params schemas', () => {
    function dsl(name: string, params: Record<string, unknown>): Record<string, unknown> {
      const id = `${name}:T`;
      return {
        components: {
          begin: { obj: { component_name: 'Begin', params: {} }, downstream: [id], upstream: [] },
          [id]: { obj: { component_name: name, params }, downstream: [], upstream: ['begin'] },
        },
      };
    }
    const accepts = (name: string, params: Record<string, unknown>) => assert.doesNotThrow(() => validateDsl(dsl(name, params)));
    const rejects = (name: string, params: Record<string, unknown>, pattern: RegExp) =>
      assert.throws(
        () => validateDsl(dsl(name, params)),
        (err: unknown) => err instanceof DslError && pattern.test(err.message),
      );

    it("VariableAssigner: accepts the editor's rows (unfinished ones too), checks the operator", () => {
      accepts('VariableAssigner', {
        variables: [
          { variable: 'env.n', operator: '+=', parameter: 2 },
          { variable: 'env.flag', operator: 'set', parameter: 'yes' },
          { variable: 'cpn@out', operator: 'clear' },
          { variable: '', parameter: '' },
        ],
        outputs: {},
        uiState: 1,
      });
      for (const operator of VARIABLE_ASSIGNER_OPERATORS) accepts('VariableAssigner', { variables: [{ variable: 'env.x', operator, parameter: 1 }] });
      rejects('VariableAssigner', { variables: [{ variable: 'env.x', operator: '%=' }] }, /Component 'VariableAssigner:T' \(VariableAssigner\): param 'variables\[0\]\.operator' must be one of "overwrite"/);
      rejects('VariableAssigner', { variables: 'env.x' }, /param 'variables' must be an array/);
      rejects('VariableAssigner', { variables: [{ variable: 3 }] }, /param 'variables\[0\]\.variable' must be a string/);
    });

    it('StringTransform: method split|merge, delimiters non-empty (a list or a string)', () => {
      accepts('StringTransform', { method: 'merge', script: '{sys.query}', delimiters: [',', '\n'], split_ref: '' });
      accepts('StringTransform', { method: 'split', split_ref: 'begin@x', delimiters: ',;' });
      rejects('StringTransform', { method: 'join' }, /param 'method' must be one of "split", "merge"/);
      rejects('StringTransform', { delimiters: [] }, /param 'delimiters' must not be empty/);
      rejects('StringTransform', { delimiters: '' }, /param 'delimiters' must not be empty/);
      rejects('StringTransform', { delimiters: [1] }, /param 'delimiters\[0\]' must be a string/);
      rejects('StringTransform', { script: ['x'] }, /param 'script' must be a string/);
    });

    it('DataOperations: operations enum, query references, rule shapes', () => {
      accepts('DataOperations', {
        query: ['{src@people}', 'src@one'],
        operations: 'filter_values',
        filter_values: [{ key: 'city', operator: '≠', value: 'Rome' }],
        updates: [{ key: 'a', value: '{sys.query}' }],
        rename_keys: [{ old_key: 'a', new_key: 'b' }],
        select_keys: ['a'],
        remove_keys: ['b'],
        outputs: { result: { type: 'Array<Object>' } },
      });
      rejects('DataOperations', { operations: 'explode' }, /param 'operations' must be one of "select_keys"/);
      rejects('DataOperations', { query: [1] }, /param 'query\[0\]' must be a string/);
      rejects('DataOperations', { select_keys: [{ name: 'a' }] }, /param 'select_keys\[0\]' must be a string/);
      rejects('DataOperations', { filter_values: [{ key: 'a', operator: '>' }] }, /param 'filter_values\[0\]\.operator' must be one of/);
      rejects('DataOperations', { rename_keys: [{ old_key: 1 }] }, /param 'rename_keys\[0\]\.old_key' must be a string/);
    });

    it('ListOperations: query is required; operations, n, sort_method and filter are checked', () => {
      accepts('ListOperations', { query: '{src@nums}', operations: 'topN', n: 3, strict: false });
      accepts('ListOperations', { query: 'src@nums', operations: 'sort', sort_method: 'desc', sort_by: 'a,b' });
      accepts('ListOperations', { query: 'src@nums', operations: 'filter', filter: { operator: 'contains', value: 'x' }, n: '2' });
      rejects('ListOperations', { operations: 'nth' }, /param 'query' is required/);
      rejects('ListOperations', { query: '' }, /param 'query' must not be empty/);
      rejects('ListOperations', { query: 'a@b', operations: 'shuffle' }, /param 'operations' must be one of "nth"/);
      rejects('ListOperations', { query: 'a@b', n: 'two' }, /param 'n' must match/);
      rejects('ListOperations', { query: 'a@b', n: true }, /param 'n' must be a number or string/);
      rejects('ListOperations', { query: 'a@b', sort_method: 'up' }, /param 'sort_method' must be one of "asc", "desc"/);
      rejects('ListOperations', { query: 'a@b', filter: { operator: '>' } }, /param 'filter\.operator' must be one of/);
    });

    it("withDefaults gives RAGFlow's defaults", () => {
      assert.equal(withDefaults('StringTransform', {}).method, 'split');
      assert.deepEqual(withDefaults('StringTransform', {}).delimiters, [',']);
      assert.equal(withDefaults('DataOperations', {}).operations, 'literal_eval');
      assert.equal(withDefaults('ListOperations', { query: 'a@b' }).operations, 'nth');
      assert.deepEqual(withDefaults('ListOperations', { query: 'a@b' }).filter, { operator: '=', value: '' });
      assert.deepEqual(withDefaults('VariableAssigner', {}).variables, []);
    });
  });
});
