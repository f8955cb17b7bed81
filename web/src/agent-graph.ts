/** How an agent's DSL becomes canvas nodes and edges: pure (no React, no CSS), so tests import it. */
import type { Edge, Node } from '@xyflow/react';
import type { Dsl, DslComponent, GraphNode } from './api/types.js';

export type NodeState = 'running' | 'finished' | 'failed';

export type ComponentData = { name: string; type: string; state?: NodeState; note?: string; selected?: boolean; webhookUrl?: string };

/** A component node's least width on the canvas, in canvas pixels: its name and type stay readable at 100% zoom. */
export const NODE_MIN_WIDTH = 180;

type XY = { x: number; y: number };

/**
 * Columns and rows of the computed layout, in canvas pixels: a column fits a node at its widest (the CSS caps
 * it at 240 px) plus room for the edge; a row fits a node of two lines plus a gap.
 */
const COLUMN = 300;
const ROW = 120;

/**
 * The DSL's components, tolerating what a hand-written or SDK-made DSL may leave out (the API keeps
 * the DSL as sent, so the console reads it defensively).
 */
function componentsOf(dsl: Dsl): Record<string, DslComponent> {
  const c = (dsl as { components?: unknown }).components;
  return c && typeof c === 'object' ? (c as Record<string, DslComponent>) : {};
}

function idList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function isXY(p: unknown): p is XY {
  return !!p && typeof p === 'object' && Number.isFinite((p as XY).x) && Number.isFinite((p as XY).y);
}

/** The component type of a DSL id like `Agent:Summarizer` when the DSL does not say. */
function typeOf(dsl: Dsl, id: string): string {
  const name = componentsOf(dsl)[id]?.obj?.component_name;
  return typeof name === 'string' && name ? name : (id.split(':')[0] ?? id);
}

/** The graph's node entries that can be drawn: objects with an id (a string, or a number taken as one). */
function graphNodesOf(dsl: Dsl): (GraphNode & { id: string })[] {
  const nodes = (dsl.graph as { nodes?: unknown } | undefined)?.nodes;
  if (!Array.isArray(nodes)) return [];
  const seen = new Set<string>();
  const out: (GraphNode & { id: string })[] = [];
  for (const n of nodes as unknown[]) {
    if (!n || typeof n !== 'object') continue;
    const raw = (n as { id?: unknown }).id;
    if (typeof raw !== 'string' && typeof raw !== 'number') continue;
    const id = String(raw);
    if (!id || seen.has(id)) continue;
    seen.add(id);
    out.push({ ...(n as GraphNode), id });
  }
  return out;
}

function graphEdgesOf(dsl: Dsl): { id?: unknown; source?: unknown; target?: unknown; sourceHandle?: unknown }[] {
  const edges = (dsl.graph as { edges?: unknown } | undefined)?.edges;
  return Array.isArray(edges) ? edges.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object') : [];
}

/**
 * The DSL's `graph` as saved by the canvas editor; without one, a left-to-right layout of the
 * components by their distance from Begin along `downstream`.
 *
 * A graph made by the SDK or the API may be partial: a node without a valid `{x, y}` position takes
 * its place in the computed layout (inside its container, a place below the container's title), a
 * component the graph leaves out is added there too, a `parentId` naming no node is dropped, and an
 * edge whose end is not on the canvas is dropped, so any DSL the API accepts can be drawn.
 */
export function canvasOf(dsl: Dsl): { nodes: Node<ComponentData>[]; edges: Edge[] } {
  const graphNodes = graphNodesOf(dsl);
  if (!graphNodes.length) return layoutComponents(dsl);

  const components = componentsOf(dsl);
  const inGraph = new Set(graphNodes.map((n) => n.id));
  const missing = Object.keys(components).filter((id) => !inGraph.has(id));
  const layout = layoutPositions(dsl, graphNodes.filter((n) => !components[n.id]).map((n) => n.id));
  const rowInParent = new Map<string, number>();

  const nodes = graphNodes.map((n): Node<ComponentData> => {
    const kind = n.type === 'group' ? 'group' : n.type === 'noteNode' ? 'note' : 'component';
    const parentId = typeof n.parentId === 'string' && n.parentId !== n.id && inGraph.has(n.parentId) ? n.parentId : undefined;
    let position: XY;
    if (isXY(n.position)) position = { x: n.position.x, y: n.position.y };
    else if (parentId) {
      // A position inside a container is relative to it: stack the unplaced children below its title.
      const row = rowInParent.get(parentId) ?? 0;
      rowInParent.set(parentId, row + 1);
      position = { x: 20, y: 40 + row * ROW };
    } else position = layout.get(n.id) ?? { x: 0, y: 0 };
    const data = n.data && typeof n.data === 'object' ? n.data : {};
    const label = [data.name, data.label].find((v) => typeof v === 'string' && v);
    const size = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
    return {
      id: n.id,
      type: kind,
      position,
      parentId,
      extent: parentId && n.extent === 'parent' ? 'parent' : undefined,
      style: kind === 'group' || kind === 'note' ? { width: size(n.width, 300), height: size(n.height, 160) } : undefined,
      data: { name: (label as string | undefined) ?? n.id, type: kind === 'note' ? 'Note' : typeOf(dsl, n.id), note: kind === 'note' ? String(data.form?.text ?? '') : undefined },
    };
  });
  for (const id of missing) nodes.push(componentNode(dsl, id, layout.get(id) ?? { x: 0, y: 0 }));
  // React Flow places a child from its parent: parents go before their children.
  const depth = (n: Node<ComponentData>, seen = new Set<string>()): number => {
    if (!n.parentId || seen.has(n.id)) return 0;
    seen.add(n.id);
    const parent = nodes.find((p) => p.id === n.parentId);
    return parent ? 1 + depth(parent, seen) : 0;
  };
  const depths = new Map(nodes.map((n) => [n.id, depth(n)]));
  nodes.sort((a, b) => depths.get(a.id)! - depths.get(b.id)!);

  const drawn = new Set(nodes.map((n) => n.id));
  const edges: Edge[] = [];
  const edgeIds = new Set<string>();
  const linked = new Set<string>();
  const addEdge = (id: string, source: string, target: string) => {
    if (!drawn.has(source) || !drawn.has(target) || linked.has(`${source}\n${target}`)) return;
    let unique = id;
    for (let i = 2; edgeIds.has(unique); i++) unique = `${id}#${i}`;
    edgeIds.add(unique);
    linked.add(`${source}\n${target}`);
    edges.push({ id: unique, source, target });
  };
  for (const e of graphEdgesOf(dsl)) {
    if (typeof e.source !== 'string' || typeof e.target !== 'string') continue;
    addEdge(typeof e.id === 'string' && e.id ? e.id : `${e.source}->${e.target}`, e.source, e.target);
  }
  // A component the graph left out is linked by its `downstream` and `upstream`.
  for (const id of missing) {
    for (const to of idList(components[id]?.downstream)) addEdge(`${id}->${to}`, id, to);
    for (const from of idList(components[id]?.upstream)) addEdge(`${from}->${id}`, from, id);
  }
  return { nodes, edges };
}

/**
 * The canvas nodes that stand for an Agent's tools: RAGFlow's editor draws them as Tool nodes linked
 * from the Agent's `tool` handle.
 */
export function toolNodesOf(dsl: Dsl, agentId: string): string[] {
  return graphEdgesOf(dsl)
    .filter((e) => e.source === agentId && e.sourceHandle === 'tool' && typeof e.target === 'string')
    .map((e) => e.target as string);
}

function componentNode(dsl: Dsl, id: string, position: XY): Node<ComponentData> {
  return { id, type: 'component', position, data: { name: id.includes(':') ? id.split(':').slice(1).join(':') : id, type: typeOf(dsl, id) } };
}

/**
 * Each component's place in a left-to-right layout by its distance from Begin along `downstream`;
 * `extra` ids (graph nodes that are no component, such as Tool nodes) get a column of their own after
 * the last one.
 */
function layoutPositions(dsl: Dsl, extra: string[] = []): Map<string, XY> {
  const components = componentsOf(dsl);
  const ids = Object.keys(components);
  const known = new Set(ids);
  const level = new Map<string, number>();
  const roots = ids.filter((id) => !idList(components[id]?.upstream).length && !components[id]?.parent_id);
  const queue: [string, number][] = (roots.length ? roots : ids.slice(0, 1)).map((id) => [id, 0]);
  for (let item = queue.shift(); item; item = queue.shift()) {
    const [id, l] = item;
    if ((level.get(id) ?? -1) >= l || l > ids.length) continue;
    level.set(id, l);
    for (const next of idList(components[id]?.downstream)) if (known.has(next)) queue.push([next, l + 1]);
  }
  for (const id of ids) if (!level.has(id)) level.set(id, 0);
  const last = Math.max(-1, ...level.values());
  for (const id of extra) if (!level.has(id)) level.set(id, last + 1);
  const rows = new Map<number, number>();
  const positions = new Map<string, XY>();
  for (const id of [...ids, ...extra]) {
    const l = level.get(id)!;
    const row = rows.get(l) ?? 0;
    rows.set(l, row + 1);
    positions.set(id, { x: l * COLUMN, y: row * ROW });
  }
  return positions;
}

function layoutComponents(dsl: Dsl): { nodes: Node<ComponentData>[]; edges: Edge[] } {
  const components = componentsOf(dsl);
  const ids = Object.keys(components);
  const known = new Set(ids);
  const positions = layoutPositions(dsl);
  const nodes = ids.map((id) => componentNode(dsl, id, positions.get(id)!));
  const edges = ids.flatMap((id) => idList(components[id]?.downstream).filter((to) => known.has(to)).map((to) => ({ id: `${id}->${to}`, source: id, target: to })));
  return { nodes, edges };
}
