/** How an agent's DSL becomes canvas nodes and edges: pure (no React, no CSS), so tests import it. */
import type { Edge, Node } from '@xyflow/react';
import type { Dsl } from './api/types.js';

export type NodeState = 'running' | 'finished' | 'failed';

export type ComponentData = { name: string; type: string; state?: NodeState; note?: string };

/** The component type of a DSL id like `Agent:Summarizer` when the DSL does not say. */
function typeOf(dsl: Dsl, id: string): string {
  return dsl.components[id]?.obj.component_name ?? id.split(':')[0] ?? id;
}

/**
 * The DSL's `graph` as saved by the canvas editor; without one, a left-to-right layout of the
 * components by their distance from Begin along `downstream`.
 */
export function canvasOf(dsl: Dsl): { nodes: Node<ComponentData>[]; edges: Edge[] } {
  if (dsl.graph?.nodes?.length) {
    // A DSL made through the API may give graph nodes without positions: those get the layout's.
    const laidOut = new Map(layoutComponents(dsl).nodes.map((n) => [n.id, n.position]));
    const nodes = dsl.graph.nodes.map((n, i): Node<ComponentData> => {
      const kind = n.type === 'group' ? 'group' : n.type === 'noteNode' ? 'note' : 'component';
      return {
        id: n.id,
        type: kind,
        position: isPosition(n.position) ? n.position : (laidOut.get(n.id) ?? { x: 0, y: i * 110 }),
        parentId: n.parentId,
        extent: n.extent,
        style: kind === 'group' || kind === 'note' ? { width: n.width ?? 300, height: n.height ?? 160 } : undefined,
        data: { name: n.data?.name ?? n.data?.label ?? n.id, type: kind === 'note' ? 'Note' : typeOf(dsl, n.id), note: kind === 'note' ? String(n.data?.form?.text ?? '') : undefined },
      };
    });
    const present = new Set(nodes.map((n) => n.id));
    const edges = (dsl.graph.edges ?? [])
      .filter((e) => present.has(e.source) && present.has(e.target))
      .map((e) => ({ id: e.id ?? `${e.source}->${e.target}`, source: e.source, target: e.target }));
    return { nodes, edges };
  }
  return layoutComponents(dsl);
}

function isPosition(p: unknown): p is { x: number; y: number } {
  const { x, y } = (p ?? {}) as { x?: unknown; y?: unknown };
  return typeof x === 'number' && Number.isFinite(x) && typeof y === 'number' && Number.isFinite(y);
}

/**
 * The canvas nodes that stand for an Agent's tools: RAGFlow's editor draws them as Tool nodes linked
 * from the Agent's `tool` handle.
 */
export function toolNodesOf(dsl: Dsl, agentId: string): string[] {
  return (dsl.graph?.edges ?? []).filter((e) => e.source === agentId && e.sourceHandle === 'tool').map((e) => e.target);
}

function layoutComponents(dsl: Dsl): { nodes: Node<ComponentData>[]; edges: Edge[] } {
  const ids = Object.keys(dsl.components);
  const level = new Map<string, number>();
  const roots = ids.filter((id) => !(dsl.components[id]!.upstream ?? []).length && !dsl.components[id]!.parent_id);
  const queue: [string, number][] = (roots.length ? roots : ids.slice(0, 1)).map((id) => [id, 0]);
  for (let item = queue.shift(); item; item = queue.shift()) {
    const [id, l] = item;
    if ((level.get(id) ?? -1) >= l || l > ids.length) continue;
    level.set(id, l);
    for (const next of dsl.components[id]?.downstream ?? []) queue.push([next, l + 1]);
  }
  for (const id of ids) if (!level.has(id)) level.set(id, 0);
  const rows = new Map<number, number>();
  const nodes = ids.map((id): Node<ComponentData> => {
    const l = level.get(id)!;
    const row = rows.get(l) ?? 0;
    rows.set(l, row + 1);
    return { id, type: 'component', position: { x: l * 240, y: row * 110 }, data: { name: id.includes(':') ? id.split(':').slice(1).join(':') : id, type: typeOf(dsl, id) } };
  });
  const edges = ids.flatMap((id) => (dsl.components[id]!.downstream ?? []).map((to) => ({ id: `${id}->${to}`, source: id, target: to })));
  return { nodes, edges };
}

