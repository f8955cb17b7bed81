import { useCallback, useMemo, useState } from 'react';
import { Background, Controls, Handle, Position, ReactFlow, type Dimensions, type Node, type NodeChange, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { Dsl } from '../api/types.js';
import { canvasOf, NODE_MIN_WIDTH, type ComponentData, type NodeState } from '../agent-graph.js';
import { CopyButton } from './CopyButton.js';

export type { NodeState };

function ComponentNode({ data }: NodeProps<Node<ComponentData>>) {
  return (
    <div className={`canvas-node ${data.state ?? ''}${data.selected ? ' selected' : ''}`} data-component-type={data.type} style={{ minWidth: NODE_MIN_WIDTH }} title={`${data.name} (${data.type})`}>
      <Handle type="target" position={Position.Left} />
      <strong>{data.name}</strong>
      <span className="muted">{data.type}</span>
      {data.state && <span className="sr-only"> ({data.state})</span>}
      {data.webhookUrl && (
        // nodrag/nopan: the URL can be selected and the button pressed without moving the canvas.
        <div className="webhook-url nodrag nopan" data-testid="webhook-url">
          <span className="small">Webhook URL</span>
          <code>{data.webhookUrl}</code>
          <CopyButton text={data.webhookUrl} label="Copy URL" />
        </div>
      )}
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

/** The Begin component's webhook address when its mode is Webhook (`ANY /api/v1/agents/{id}/webhook`). */
function webhookUrlOf(dsl: Dsl, agentId: string | undefined): string | undefined {
  const mode = (dsl.components?.begin?.obj?.params as { mode?: unknown } | undefined)?.mode;
  if (!agentId || typeof mode !== 'string' || mode.toLowerCase() !== 'webhook') return undefined;
  return `${location.origin}/api/v1/agents/${agentId}/webhook`;
}

/**
 * The agent's canvas. Clicking a component node selects it (`onSelect`): the run panel then shows that
 * component's step of the selected run. A Begin in Webhook mode shows its URL with a copy button.
 */
export function AgentCanvas({
  dsl,
  states,
  agentId,
  selected,
  onSelect,
}: {
  dsl: Dsl;
  states: Record<string, NodeState>;
  agentId?: string;
  selected?: string;
  onSelect?: (componentId: string) => void;
}) {
  const base = useMemo(() => canvasOf(dsl), [dsl]);
  const webhookUrl = useMemo(() => webhookUrlOf(dsl, agentId), [dsl, agentId]);
  // The size React Flow measured for each node, handed back with the node. A node object that changes (its
  // state as a run goes on) without its `measured` size is hidden until measured again, and under load a
  // canvas was seen left blank after a run.
  const [measured, setMeasured] = useState<Record<string, Dimensions>>({});
  const onNodesChange = useCallback((changes: NodeChange[]) => {
    const sized = changes.flatMap((c) => (c.type === 'dimensions' && c.dimensions ? [[c.id, c.dimensions] as const] : []));
    if (sized.length) setMeasured((known) => ({ ...known, ...Object.fromEntries(sized) }));
  }, []);
  const nodes = useMemo(
    () =>
      base.nodes.map((n) => {
        const extra: Partial<ComponentData> = {};
        if (states[n.id]) extra.state = states[n.id];
        if (selected === n.id) extra.selected = true;
        if (n.id === 'begin' && webhookUrl) extra.webhookUrl = webhookUrl;
        const size = measured[n.id];
        return Object.keys(extra).length || size ? { ...n, ...(size ? { measured: size } : {}), data: { ...n.data, ...extra } } : n;
      }),
    [base, states, selected, webhookUrl, measured],
  );
  return (
    <div className="canvas" role="region" aria-label="Agent canvas">
      <ReactFlow
        nodes={nodes}
        edges={base.edges}
        nodeTypes={nodeTypes}
        fitView
        fitViewOptions={FIT_VIEW}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        minZoom={0.2}
        onNodesChange={onNodesChange}
        onNodeClick={(_, node) => node.type === 'component' && onSelect?.(node.id)}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
