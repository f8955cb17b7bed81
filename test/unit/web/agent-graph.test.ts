import assert from 'node:assert/strict';
import { canvasOf, toolNodesOf } from '../../../web/src/agent-graph.js';
import type { Dsl } from '../../../web/src/api/types.js';

const component = (name: string, downstream: string[], upstream: string[] = []) => ({ obj: { component_name: name, params: {} }, downstream, upstream });

describe('agent canvas from a DSL', () => {
  it('without a graph, lays the components out left to right by their distance from Begin, one edge per downstream link', () => {
    const dsl: Dsl = {
      components: {
        begin: component('Begin', ['Retrieval:Search', 'Message:Hello']),
        'Retrieval:Search': component('Retrieval', ['Agent:Answer'], ['begin']),
        'Agent:Answer': component('Agent', ['Message:Reply'], ['Retrieval:Search']),
        'Message:Reply': component('Message', [], ['Agent:Answer']),
        'Message:Hello': component('Message', [], ['begin']),
      },
    };
    const { nodes, edges } = canvasOf(dsl);
    const x = Object.fromEntries(nodes.map((n) => [n.id, n.position.x]));
    assert.equal(x.begin, 0);
    assert.equal(x['Retrieval:Search'], x['Message:Hello']);
    assert.ok(x['Retrieval:Search']! > x.begin!);
    assert.ok(x['Agent:Answer']! > x['Retrieval:Search']!);
    assert.ok(x['Message:Reply']! > x['Agent:Answer']!);
    assert.notEqual(nodes.find((n) => n.id === 'Retrieval:Search')!.position.y, nodes.find((n) => n.id === 'Message:Hello')!.position.y, 'nodes in one column do not overlap');
    assert.deepEqual(nodes.find((n) => n.id === 'Agent:Answer')!.data, { name: 'Answer', type: 'Agent' });
    assert.deepEqual(edges.map((e) => `${e.source}->${e.target}`).sort(), ['Agent:Answer->Message:Reply', 'Retrieval:Search->Agent:Answer', 'begin->Message:Hello', 'begin->Retrieval:Search']);
  });

  it('a graph whose nodes lack positions (a DSL made through the API) gets the layout\'s; edges to missing nodes are dropped', () => {
    const dsl = {
      components: {
        begin: component('Begin', ['Agent:Answer']),
        'Agent:Answer': component('Agent', ['Message:Reply'], ['begin']),
        'Message:Reply': component('Message', [], ['Agent:Answer']),
      },
      graph: {
        nodes: [
          { id: 'begin', type: 'beginNode', data: { name: 'Begin' } },
          { id: 'Agent:Answer', type: 'agentNode', position: { x: 300 }, data: { name: 'Answer' } },
          { id: 'Message:Reply', type: 'messageNode', position: { x: 600, y: 40 }, data: { name: 'Reply' } },
        ],
        edges: [
          { id: 'e1', source: 'begin', target: 'Agent:Answer' },
          { source: 'Agent:Answer', target: 'Message:Reply' },
          { id: 'e3', source: 'Agent:Answer', target: 'Tool:Gone' },
        ],
      },
    } as unknown as Dsl;
    const { nodes, edges } = canvasOf(dsl);
    const at = Object.fromEntries(nodes.map((n) => [n.id, n.position]));
    for (const p of Object.values(at)) assert.ok(Number.isFinite(p.x) && Number.isFinite(p.y), JSON.stringify(p));
    assert.deepEqual(at.begin, { x: 0, y: 0 }, 'the layout\'s place for Begin');
    assert.ok(at['Agent:Answer']!.x > at.begin!.x, 'a partial position counts as none');
    assert.deepEqual(at['Message:Reply'], { x: 600, y: 40 }, 'a whole position is kept');
    assert.deepEqual(edges.map((e) => [e.id, e.source, e.target]), [['e1', 'begin', 'Agent:Answer'], ['Agent:Answer->Message:Reply', 'Agent:Answer', 'Message:Reply']]);
  });

  it('a cycle (a loop back upstream) still ends with every component placed', () => {
    const dsl: Dsl = { components: { begin: component('Begin', ['Agent:A']), 'Agent:A': component('Agent', ['Agent:B'], ['begin']), 'Agent:B': component('Agent', ['Agent:A'], ['Agent:A']) } };
    const { nodes } = canvasOf(dsl);
    assert.equal(nodes.length, 3);
  });

  it('with a graph, keeps its positions, containers and notes, and names each node by its component type', () => {
    const dsl: Dsl = {
      components: { begin: component('Begin', ['Iteration:Each']), 'Iteration:Each': component('Iteration', []), 'Agent:Inner': { ...component('Agent', []), parent_id: 'Iteration:Each' } },
      graph: {
        nodes: [
          { id: 'begin', type: 'beginNode', position: { x: 10, y: 20 }, data: { name: 'Begin' } },
          { id: 'Iteration:Each', type: 'group', position: { x: 300, y: 0 }, width: 500, height: 200, data: { name: 'For each' } },
          { id: 'Agent:Inner', type: 'agentNode', position: { x: 40, y: 60 }, parentId: 'Iteration:Each', extent: 'parent', data: { name: 'Summarizer' } },
          { id: 'Note:About', type: 'noteNode', position: { x: 0, y: -200 }, data: { name: 'About', form: { text: 'What this does' } } },
        ],
        edges: [{ id: 'e1', source: 'begin', target: 'Iteration:Each' }],
      },
    };
    const { nodes, edges } = canvasOf(dsl);
    const byId = Object.fromEntries(nodes.map((n) => [n.id, n]));
    assert.deepEqual(byId.begin!.position, { x: 10, y: 20 });
    assert.equal(byId['Iteration:Each']!.type, 'group');
    assert.deepEqual(byId['Iteration:Each']!.style, { width: 500, height: 200 });
    assert.equal(byId['Agent:Inner']!.parentId, 'Iteration:Each');
    assert.deepEqual(byId['Agent:Inner']!.data, { name: 'Summarizer', type: 'Agent', note: undefined });
    assert.equal(byId['Note:About']!.type, 'note');
    assert.equal(byId['Note:About']!.data.note, 'What this does');
    assert.deepEqual(edges, [{ id: 'e1', source: 'begin', target: 'Iteration:Each' }]);
  });

  it("an Agent's tools are the nodes linked from its `tool` handle (where its tool calls light up)", () => {
    const dsl: Dsl = {
      components: { begin: component('Begin', ['Agent:A']), 'Agent:A': component('Agent', ['Message:M'], ['begin']), 'Message:M': component('Message', [], ['Agent:A']) },
      graph: {
        nodes: [],
        edges: [
          { id: 'e1', source: 'Agent:A', sourceHandle: 'tool', target: 'Tool:ATools' },
          { id: 'e2', source: 'Agent:A', sourceHandle: 'start', target: 'Message:M' },
          { id: 'e3', source: 'begin', target: 'Agent:A' },
        ],
      },
    };
    assert.deepEqual(toolNodesOf(dsl, 'Agent:A'), ['Tool:ATools']);
    assert.deepEqual(toolNodesOf(dsl, 'Message:M'), []);
    assert.deepEqual(toolNodesOf({ components: {} }, 'Agent:A'), [], 'no graph, no tool nodes');
  });
});
