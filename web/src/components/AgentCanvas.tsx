import { useMemo } from 'react';
import { Background, Controls, Handle, Position, ReactFlow, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { Dsl } from '../api/types.js';
import { canvasOf, type ComponentData, type NodeState } from '../agent-graph.js';

export type { NodeState };

function ComponentNode({ data }: NodeProps<Node<ComponentData>>) {
  return (
    <div className={`canvas-node ${data.state ?? ''}`} data-component-type={data.type}>
      <Handle type="target" position={Position.Left} />
      <strong>{data.name}</strong>
      <span className="muted">{data.type}</span>
      {data.state && <span className="sr-only"> ({data.state})</span>}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

function GroupNode({ data }: NodeProps<Node<ComponentData>>) {
  return (
    <div className={`canvas-group ${data.state ?? ''}`}>
      <Handle type="target" position={Position.Left} />
      <strong>{data.name}</strong> <span className="muted">{data.type}</span>
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

function NoteNode({ data }: NodeProps<Node<ComponentData>>) {
  return (
    <div className="canvas-note">
      <strong>{data.name}</strong>
      <p>{data.note}</p>
    </div>
  );
}

const nodeTypes = { component: ComponentNode, group: GroupNode, note: NoteNode };

/**
 * The zoom buttons sit at the bottom left, over the canvas: the fitted view keeps a strip that wide free on
 * the left, so on a phone they never cover the first node (Begin).
 */
const FIT_VIEW = { padding: { top: '16px', right: '16px', bottom: '16px', left: '64px' } } as const;

export function AgentCanvas({ dsl, states }: { dsl: Dsl; states: Record<string, NodeState> }) {
  const base = useMemo(() => canvasOf(dsl), [dsl]);
  const nodes = useMemo(() => base.nodes.map((n) => (states[n.id] ? { ...n, data: { ...n.data, state: states[n.id] } } : n)), [base, states]);
  return (
    <div className="canvas" role="region" aria-label="Agent canvas">
      <ReactFlow nodes={nodes} edges={base.edges} nodeTypes={nodeTypes} fitView fitViewOptions={FIT_VIEW} nodesDraggable={false} nodesConnectable={false} elementsSelectable={false} minZoom={0.2}>
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
