import assert from 'node:assert/strict';
import { countTags, normalizeTags } from '../../../src/services/agent-tags.js';
import { resetCanvas } from '../../../src/agents/reset.js';
import { debugSetup, DebugInputError } from '../../../src/agents/component-debug.js';
import type { CanvasDsl } from '../../../src/agents/dsl.js';

const dsl = (): CanvasDsl => ({
  components: {
    begin: { obj: { component_name: 'Begin', params: { inputs: { city: { name: 'City', type: 'line' } } } }, downstream: ['LLM:A'], upstream: [] },
    'LLM:A': { obj: { component_name: 'LLM', params: { sys_prompt: '{begin@city}' } }, downstream: [], upstream: ['begin'] },
    'Categorize:C': { obj: { component_name: 'Categorize', params: { query: 'begin@city' } }, downstream: [], upstream: [] },
    'Loop:L': { obj: { component_name: 'Loop', params: {} }, downstream: [], upstream: [] },
  },
  globals: { 'sys.query': 'q', 'sys.conversation_turns': 2, 'sys.files': ['x'], 'sys.user_id': 'u', 'env.n': 5 },
  variables: { n: { type: 'number' } },
  history: [['user', 'q']],
  path: ['begin'],
  retrieval: [{ chunks: {}, doc_aggs: {} }],
  component_outputs: { begin: { city: 'Oslo' } },
});

describe('agent editor routes: tags, reset and debug inputs', () => {
  it('tags drop case-insensitive duplicates and empty ones, and commas inside a listed tag become spaces', () => {
    assert.equal(normalizeTags(['ml', 'ML', ' ', 'a,b']), 'ml,a b');
    assert.equal(normalizeTags(' x , y ,x'), 'x,y');
  });

  it('tag counts put the most used first, then by name', () => {
    assert.deepEqual(countTags(['b,a', 'a', '']), [{ tag: 'a', count: 2 }, { tag: 'b', count: 1 }]);
  });

  it('reset empties history, path, references and outputs, sys.* by type, env.* to the declared default', () => {
    const out = resetCanvas(dsl());
    assert.deepEqual([out.history, out.path, out.retrieval, out.component_outputs], [[], [], [], {}]);
    assert.deepEqual(out.globals, { 'sys.query': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.user_id': '', 'env.n': 0 });
  });

  it('debug values land where the component reads them: outputs, globals, Begin inputs, Categorize query', () => {
    const llm = debugSetup(dsl(), 'LLM:A', { 'begin@city': { value: 'Bergen' }, 'sys.query': { value: 'hi' } });
    assert.deepEqual(llm.canvas.component_outputs, { begin: { city: 'Bergen' } });
    assert.equal(llm.canvas.globals['sys.query'], 'hi');
    assert.deepEqual(debugSetup(dsl(), 'begin', { city: { value: 'Oslo' } }).inputs, { city: { value: 'Oslo' } });
    const cat = debugSetup(dsl(), 'Categorize:C', { query: { value: 'refund' } });
    assert.equal(cat.canvas.globals['sys.query'], 'refund');
    assert.equal(cat.canvas.components['Categorize:C']!.obj.params.query, undefined);
  });

  it('debug refuses an input the component does not take, a reference to a missing component, and a container', () => {
    assert.throws(() => debugSetup(dsl(), 'LLM:A', { colour: { value: 'red' } }), DebugInputError);
    assert.throws(() => debugSetup(dsl(), 'LLM:A', { 'Nope:X@y': { value: 1 } }), /not in the agent/);
    assert.throws(() => debugSetup(dsl(), 'Loop:L', {}), /runs only as part of the whole agent/);
  });
});
