import assert from 'node:assert/strict';
import { canvasOf, NODE_MIN_WIDTH, toolNodesOf } from '../../../web/src/agent-graph.js';
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
  describe('a graph made by the SDK or the API (no positions, or partial)', () => {
    const components = {
      begin: component('Begin', ['Agent:A']),
      'Agent:A': component('Agent', ['Message:M'], ['begin']),
      'Message:M': component('Message', [], ['Agent:A']),
    };

    it('nodes without a position take their place in the computed layout, left to right from Begin', () => {
      const dsl = { components, graph: { nodes: [{ id: 'begin', data: { name: 'Begin' } }, { id: 'Agent:A' }, { id: 'Message:M', position: null }], edges: [] } } as unknown as Dsl;
      const { nodes } = canvasOf(dsl);
      const at = Object.fromEntries(nodes.map((n) => [n.id, n.position]));
      for (const n of nodes) assert.ok(Number.isFinite(n.position.x) && Number.isFinite(n.position.y), `${n.id} has a position`);
      assert.equal(at.begin!.x, 0);
      assert.ok(at['Agent:A']!.x > at.begin!.x);
      assert.ok(at['Message:M']!.x > at['Agent:A']!.x);
      assert.equal(nodes.find((n) => n.id === 'Agent:A')!.data.type, 'Agent');
    });

    it('a partial position ({x} alone, a string, NaN) is replaced by the layout one; a whole one is kept', () => {
      const dsl = {
        components,
        graph: { nodes: [{ id: 'begin', position: { x: 500, y: 7 } }, { id: 'Agent:A', position: { x: 10 } }, { id: 'Message:M', position: { x: '5', y: Number.NaN } }], edges: [] },
      } as unknown as Dsl;
      const at = Object.fromEntries(canvasOf(dsl).nodes.map((n) => [n.id, n.position]));
      assert.deepEqual(at.begin, { x: 500, y: 7 });
      assert.deepEqual(at['Agent:A'], { x: 300, y: 0 });
      assert.deepEqual(at['Message:M'], { x: 600, y: 0 });
    });

    it('edges to or from a node not on the canvas are dropped; components the graph leaves out are added with their links', () => {
      const dsl = {
        components,
        graph: {
          nodes: [{ id: 'begin' }, { id: 'Agent:A' }, { id: 'Tool:T' }, { id: 'Agent:Inner', parentId: 'Iteration:Gone', extent: 'parent' }],
          edges: [
            { id: 'e1', source: 'begin', target: 'Agent:A' },
            { id: 'e2', source: 'Agent:A', target: 'Nowhere:X' },
            { id: 'e3', source: 'Ghost', target: 'begin' },
            { id: 'e4', source: 'Agent:A', sourceHandle: 'tool', target: 'Tool:T' },
            { source: 'begin' },
          ],
        },
      } as unknown as Dsl;
      const { nodes, edges } = canvasOf(dsl);
      assert.deepEqual(nodes.map((n) => n.id).sort(), ['Agent:A', 'Agent:Inner', 'Message:M', 'Tool:T', 'begin']);
      assert.deepEqual(edges.map((e) => `${e.source}->${e.target}`).sort(), ['Agent:A->Message:M', 'Agent:A->Tool:T', 'begin->Agent:A']);
      const inner = nodes.find((n) => n.id === 'Agent:Inner')!;
      assert.equal(inner.parentId, undefined, 'a parent that is not on the canvas is dropped');
      assert.equal(inner.extent, undefined);
      const ids = new Set(nodes.map((n) => n.id));
      for (const e of edges) assert.ok(ids.has(e.source) && ids.has(e.target), `edge ${e.id} joins drawn nodes`);
      assert.equal(new Set(edges.map((e) => e.id)).size, edges.length, 'edge ids are unique');
    });

    it('a child without a position sits inside its container, which comes before it', () => {
      const dsl = {
        components: { begin: component('Begin', ['Iteration:Each']), 'Iteration:Each': component('Iteration', [], ['begin']), 'Agent:Inner': { ...component('Agent', []), parent_id: 'Iteration:Each' } },
        graph: { nodes: [{ id: 'Agent:Inner', parentId: 'Iteration:Each', extent: 'parent' }, { id: 'begin' }, { id: 'Iteration:Each', type: 'group' }], edges: [] },
      } as unknown as Dsl;
      const { nodes } = canvasOf(dsl);
      const order = nodes.map((n) => n.id);
      assert.ok(order.indexOf('Iteration:Each') < order.indexOf('Agent:Inner'));
      const inner = nodes.find((n) => n.id === 'Agent:Inner')!;
      assert.equal(inner.parentId, 'Iteration:Each');
      assert.deepEqual(inner.position, { x: 20, y: 40 });
    });

    it('junk in the graph (entries without an id, edges not an array) draws what it can', () => {
      const dsl = { components, graph: { nodes: [null, 3, { data: {} }, { id: 'begin' }], edges: 'none' } } as unknown as Dsl;
      const { nodes, edges } = canvasOf(dsl);
      assert.deepEqual(nodes.map((n) => n.id).sort(), ['Agent:A', 'Message:M', 'begin']);
      assert.deepEqual(edges.map((e) => `${e.source}->${e.target}`).sort(), ['Agent:A->Message:M', 'begin->Agent:A']);
      assert.deepEqual(toolNodesOf(dsl, 'Agent:A'), []);
    });
  });

  it('the computed layout leaves room for readable nodes: columns wider than the widest node (240 px), rows taller than a two-line node', () => {
    assert.ok(NODE_MIN_WIDTH >= 180);
    const dsl: Dsl = {
      components: {
        begin: component('Begin', ['Agent:A', 'Agent:B', 'Agent:C']),
        'Agent:A': component('Agent', ['Message:M'], ['begin']),
        'Agent:B': component('Agent', ['Message:M'], ['begin']),
        'Agent:C': component('Agent', ['Message:M'], ['begin']),
        'Message:M': component('Message', [], ['Agent:A', 'Agent:B', 'Agent:C']),
      },
    };
    const { nodes } = canvasOf(dsl);
    // The CSS caps a node at 240 px wide; name and type on two lines at 14-15 px make it about 60 px tall.
    const WIDEST = 240;
    const TWO_LINES = 70;
    for (const a of nodes)
      for (const b of nodes) {
        if (a === b) continue;
        const apart = Math.abs(a.position.x - b.position.x) >= WIDEST + 40 || Math.abs(a.position.y - b.position.y) >= TWO_LINES + 20;
        assert.ok(apart, `${a.id} at ${JSON.stringify(a.position)} and ${b.id} at ${JSON.stringify(b.position)} leave room between them`);
      }
  });
});
