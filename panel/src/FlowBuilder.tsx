import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import {
  addEdge,
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
  type NodeProps,
} from '@xyflow/react';
import { api, ApiError, enc, errorText } from './api';

type RuleKind = 'contains' | 'equals' | 'regex' | 'any';
interface Rule {
  kind: RuleKind;
  value: string;
}
type Data = { kind: 'message'; text: string } | { kind: 'condition'; rules: Rule[] } | { kind: 'handover'; text: string };

/** The server's complaints, by node id (kept out of node data: React Flow writes data back). */
const NodeErrors = createContext<Record<string, string>>({});
type FNode = Node<Data & Record<string, unknown>>;

/** The flow document of PUT /api/{id}/flow (see docs/flows.md). */
interface FlowDoc {
  name: string;
  start: string;
  nodes: Record<string, Record<string, unknown>>;
}

function Title({ id, kind }: { id: string; kind: string }) {
  const error = useContext(NodeErrors)[id];
  return (
    <>
      <div className="fn-title">
        {kind} <span className="muted">{id}</span>
      </div>
      {error && (
        <div className="fn-error" role="alert" data-testid={`error-${id}`}>
          {error}
        </div>
      )}
    </>
  );
}

function MessageNode({ id, data }: NodeProps<FNode>) {
  const { updateNodeData } = useReactFlow();
  const d = data as Extract<Data, { kind: 'message' }>;
  return (
    <div className={`fn fn-message${useContext(NodeErrors)[id] ? ' has-error' : ''}`}>
      <Handle type="target" position={Position.Left} />
      <Title id={id} kind="Message" />
      <label>
        Text
        <textarea className="nodrag" aria-label={`text of ${id}`} value={d.text} onChange={(e) => updateNodeData(id, { text: e.target.value })} rows={2} />
      </label>
      <Handle type="source" position={Position.Right} id="next" />
    </div>
  );
}

function HandoverNode({ id, data }: NodeProps<FNode>) {
  const { updateNodeData } = useReactFlow();
  const d = data as Extract<Data, { kind: 'handover' }>;
  return (
    <div className={`fn fn-handover${useContext(NodeErrors)[id] ? ' has-error' : ''}`}>
      <Handle type="target" position={Position.Left} />
      <Title id={id} kind="Handover" />
      <label>
        Text before a person takes over
        <textarea className="nodrag" aria-label={`text of ${id}`} value={d.text} onChange={(e) => updateNodeData(id, { text: e.target.value })} rows={2} />
      </label>
      <Handle type="source" position={Position.Right} id="next" />
    </div>
  );
}

function ConditionNode({ id, data }: NodeProps<FNode>) {
  const { updateNodeData } = useReactFlow();
  const d = data as Extract<Data, { kind: 'condition' }>;
  const set = (i: number, patch: Partial<Rule>): void => updateNodeData(id, { rules: d.rules.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
  return (
    <div className={`fn fn-condition${useContext(NodeErrors)[id] ? ' has-error' : ''}`}>
      <Handle type="target" position={Position.Left} />
      <Title id={id} kind="Condition" />
      {d.rules.map((r, i) => (
        <div className="fn-rule" key={i}>
          <select className="nodrag" aria-label={`rule ${i + 1} kind of ${id}`} value={r.kind} onChange={(e) => set(i, { kind: e.target.value as RuleKind })}>
            <option value="contains">contains</option>
            <option value="equals">equals</option>
            <option value="regex">regex</option>
            <option value="any">any</option>
          </select>
          {r.kind !== 'any' && <input className="nodrag" aria-label={`rule ${i + 1} value of ${id}`} value={r.value} onChange={(e) => set(i, { value: e.target.value })} />}
          <button type="button" className="nodrag small" aria-label={`remove rule ${i + 1} of ${id}`} onClick={() => updateNodeData(id, { rules: d.rules.filter((_, j) => j !== i) })}>
            ×
          </button>
          <Handle type="source" position={Position.Right} id={`rule-${i}`} />
        </div>
      ))}
      <button type="button" className="nodrag small" onClick={() => updateNodeData(id, { rules: [...d.rules, { kind: 'contains', value: '' }] })}>
        + rule
      </button>
      <div className="fn-rule">
        <span className="muted">else</span>
        <Handle type="source" position={Position.Right} id="else" />
      </div>
    </div>
  );
}

const nodeTypes = { message: MessageNode, condition: ConditionNode, handover: HandoverNode };

function toDoc(name: string, start: string, nodes: FNode[], edges: Edge[]): FlowDoc {
  const target = (source: string, handle: string): string | undefined => edges.find((e) => e.source === source && (e.sourceHandle ?? 'next') === handle)?.target;
  const doc: FlowDoc = { name, start, nodes: {} };
  for (const n of nodes) {
    const d = n.data as Data;
    const next = target(n.id, 'next');
    if (d.kind === 'message') doc.nodes[n.id] = { type: 'message', text: d.text, ...(next ? { next } : {}) };
    else if (d.kind === 'handover') doc.nodes[n.id] = { type: 'handover', ...(d.text ? { text: d.text } : {}), ...(next ? { next } : {}) };
    else {
      const els = target(n.id, 'else');
      const rules = d.rules.map((r, i) => {
        const to = target(n.id, `rule-${i}`);
        return { ...(r.kind === 'any' ? { any: true } : { [r.kind]: r.value }), ...(to ? { next: to } : {}) };
      });
      doc.nodes[n.id] = { type: 'condition', rules, ...(els ? { else: els } : {}) };
    }
  }
  return doc;
}

function fromDoc(doc: FlowDoc, positions: Record<string, { x: number; y: number }>): { nodes: FNode[]; edges: Edge[] } {
  const nodes: FNode[] = [];
  const edges: Edge[] = [];
  const edge = (source: string, sourceHandle: string, target: unknown): void => {
    if (typeof target === 'string') edges.push({ id: `${source}-${sourceHandle}-${target}`, source, sourceHandle, target });
  };
  Object.entries(doc.nodes).forEach(([id, n], i) => {
    const position = positions[id] ?? { x: 40 + (i % 3) * 300, y: 40 + Math.floor(i / 3) * 220 };
    if (n.type === 'condition') {
      const rules = (n.rules as Record<string, unknown>[]).map((r, j) => {
        const kind = (['contains', 'equals', 'regex', 'any'] as const).find((k) => k in r) ?? 'any';
        edge(id, `rule-${j}`, r.next);
        return { kind, value: kind === 'any' ? '' : String(r[kind]) };
      });
      edge(id, 'else', n.else);
      nodes.push({ id, type: 'condition', position, data: { kind: 'condition', rules } });
    } else {
      edge(id, 'next', n.next);
      const kind = n.type === 'handover' ? 'handover' : 'message';
      nodes.push({ id, type: kind, position, data: { kind, text: typeof n.text === 'string' ? n.text : '' } });
    }
  });
  return { nodes, edges };
}

function Builder({ id }: { id: string }) {
  const posKey = `flow-positions:${id}`;
  const [nodes, setNodes] = useState<FNode[]>([]);
  const [edges, setEdges] = useState<Edge[]>([]);
  const [name, setName] = useState('panel flow');
  const [start, setStart] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');

  useEffect(() => {
    api<{ flow: FlowDoc }>('GET', `/api/${enc(id)}/flow`).then(
      (r) => {
        const positions = JSON.parse(localStorage.getItem(posKey) ?? '{}') as Record<string, { x: number; y: number }>;
        const g = fromDoc(r.flow, positions);
        setNodes(g.nodes);
        setEdges(g.edges);
        setName(r.flow.name);
        setStart(r.flow.start);
      },
      () => undefined,
    );
  }, [id, posKey]);

  // Every node in sight when one is added or the flow is loaded (never zoomed past 1).
  const { fitView } = useReactFlow();
  const count = nodes.length;
  useEffect(() => {
    if (count === 0) return;
    const t = setTimeout(() => void fitView({ padding: 0.15, maxZoom: 1 }), 30);
    return () => clearTimeout(t);
  }, [count, fitView]);

  const onNodesChange = useCallback((c: NodeChange<FNode>[]) => setNodes((ns) => applyNodeChanges(c, ns)), []);
  const onEdgesChange = useCallback((c: EdgeChange[]) => setEdges((es) => applyEdgeChanges(c, es)), []);
  // One edge per source handle: a new connection replaces the old one.
  const onConnect = useCallback((c: Connection) => setEdges((es) => addEdge(c, es.filter((e) => !(e.source === c.source && (e.sourceHandle ?? null) === (c.sourceHandle ?? null))))), []);

  const add = (kind: Data['kind']): void => {
    let n = nodes.length + 1;
    while (nodes.some((x) => x.id === `${kind}-${n}`)) n += 1;
    const nid = `${kind}-${n}`;
    const data: Data = kind === 'condition' ? { kind, rules: [{ kind: 'contains', value: '' }] } : { kind, text: '' };
    const i = nodes.length;
    setNodes((ns) => [...ns, { id: nid, type: kind, position: { x: 40 + (i % 3) * 320, y: 40 + Math.floor(i / 3) * 240 }, data }]);
    if (!start) setStart(nid);
  };

  const save = async (): Promise<void> => {
    setErrors({});
    setMessage('');
    setError('');
    const s = nodes.some((n) => n.id === start) ? start : (nodes[0]?.id ?? '');
    try {
      await api('PUT', `/api/${enc(id)}/flow`, toDoc(name, s, nodes, edges));
      localStorage.setItem(posKey, JSON.stringify(Object.fromEntries(nodes.map((n) => [n.id, n.position]))));
      setMessage('Saved: the flow is active.');
    } catch (err) {
      const node = err instanceof ApiError && typeof err.detail.node === 'string' ? err.detail.node : null;
      if (node && nodes.some((n) => n.id === node)) setErrors({ [node]: err instanceof Error ? err.message : String(err) });
      setError(errorText(err));
    }
  };


  return (
    <div className="builder">
      <div className="row wrap toolbar">
        <button type="button" onClick={() => add('message')}>
          Add message
        </button>
        <button type="button" onClick={() => add('condition')}>
          Add condition
        </button>
        <button type="button" onClick={() => add('handover')}>
          Add handover
        </button>
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Start
          <select aria-label="start node" value={start} onChange={(e) => setStart(e.target.value)}>
            {nodes.map((n) => (
              <option key={n.id} value={n.id}>
                {n.id}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="primary" onClick={() => void save()}>
          Save flow
        </button>
      </div>
      {message && <p className="ok">{message}</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="canvas">
        <NodeErrors.Provider value={errors}>
        <ReactFlow nodes={nodes} edges={edges} nodeTypes={nodeTypes} onNodesChange={onNodesChange} onEdgesChange={onEdgesChange} onConnect={onConnect} defaultViewport={{ x: 0, y: 0, zoom: 1 }} deleteKeyCode={['Backspace', 'Delete']}>
          <Background />
          <Controls />
        </ReactFlow>
        </NodeErrors.Provider>
      </div>
      <p className="muted">Drag from a node's right handle to another node's left handle to connect; select and press Delete to remove.</p>
    </div>
  );
}

export function FlowBuilder({ id }: { id: string }) {
  return (
    <ReactFlowProvider>
      <Builder id={id} />
    </ReactFlowProvider>
  );
}
