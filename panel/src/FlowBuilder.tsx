import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import {
  addEdge,
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  useStore,
  useUpdateNodeInternals,
  type Connection,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
  type NodeProps,
  type ReactFlowState,
} from '@xyflow/react';
import { api, ApiError, enc, errorText } from './api';
import { ConfirmButton } from './Confirm';
import { layoutFlow } from './flow-layout';
import { RoutedEdge } from './RoutedEdge';

type RuleKind = 'contains' | 'equals' | 'regex' | 'any';
/** Fields the builder does not edit but keeps as they are: `description` and the "_" fields of tools. */
type Extra = Record<string, unknown>;
interface Rule {
  kind: RuleKind;
  value: string;
  extra: Extra;
}
type Data = { kind: 'message'; text: string; extra: Extra } | { kind: 'condition'; rules: Rule[]; extra: Extra } | { kind: 'handover'; text: string; extra: Extra };
type FNode = Node<Data & Record<string, unknown>>;

/** The flow document of PUT /api/{id}/flow (docs/flows.md). */
interface FlowDoc {
  name: string;
  start: string;
  nodes: Record<string, Record<string, unknown>>;
  [extra: string]: unknown;
}

/** Where the builder keeps a node's place on the canvas: a "_" field, which the gateway keeps and ignores. */
const POSITION = '_position';

/**
 * What nodes need from the graph: the server's complaints by node id (kept out of node data: React
 * Flow writes data back), the start node, and the connections, so each can be chosen from a list
 * as well as drawn (the keyboard's way).
 */
interface Graph {
  errors: Record<string, string>;
  start: string;
  ids: string[];
  targetOf(source: string, handle: string): string;
  connect(source: string, handle: string, target: string): void;
  removeNode(id: string): void;
  removeRule(id: string, index: number): void;
}
const GraphContext = createContext<Graph>({
  errors: {},
  start: '',
  ids: [],
  targetOf: () => '',
  connect: () => undefined,
  removeNode: () => undefined,
  removeRule: () => undefined,
});

function Title({ id, kind }: { id: string; kind: string }) {
  const g = useContext(GraphContext);
  const error = g.errors[id];
  return (
    <>
      <div className="fn-title">
        <span>
          {kind} <span className="muted">{id}</span>
        </span>
        {g.start === id && <span className="fn-start">start</span>}
        <button type="button" className="nodrag small" aria-label={`remove node ${id}`} title="Remove this node" onClick={() => g.removeNode(id)}>
          ×
        </button>
      </div>
      {error && (
        <div className="fn-error" role="alert" data-testid={`error-${id}`}>
          {error}
        </div>
      )}
    </>
  );
}

/** The target of one exit of a node, as a list: the same as drawing the edge. */
function NextSelect({ id, handle, label }: { id: string; handle: string; label: string }) {
  const g = useContext(GraphContext);
  const name = handle === 'next' ? `next of ${id}` : handle === 'else' ? `else of ${id}` : `${handle.replace('rule-', 'rule ').replace(/\d+$/, (n) => String(Number(n) + 1))} next of ${id}`;
  return (
    <label className="fn-next">
      <span>{label}</span>
      <select className="nodrag" aria-label={name} value={g.targetOf(id, handle)} onChange={(e) => g.connect(id, handle, e.target.value)}>
        <option value="">(end)</option>
        {g.ids.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
    </label>
  );
}

const hasError = (g: Graph, id: string): string => (g.errors[id] ? ' has-error' : '');

function TextNode({ id, data, kind, label }: { id: string; data: Extract<Data, { text: string }>; kind: string; label: string }) {
  const { updateNodeData } = useReactFlow();
  const g = useContext(GraphContext);
  return (
    <div className={`fn fn-${data.kind}${hasError(g, id)}`}>
      <Handle type="target" position={Position.Left} />
      <Title id={id} kind={kind} />
      <label>
        {label}
        <textarea className="nodrag nowheel" aria-label={`text of ${id}`} value={data.text} onChange={(e) => updateNodeData(id, { text: e.target.value })} rows={2} />
      </label>
      <NextSelect id={id} handle="next" label={data.kind === 'handover' ? 'After release' : 'Then'} />
      <Handle type="source" position={Position.Right} id="next" />
    </div>
  );
}

function MessageNode({ id, data }: NodeProps<FNode>) {
  return <TextNode id={id} data={data as Extract<Data, { kind: 'message' }>} kind="Message" label="Text" />;
}

function HandoverNode({ id, data }: NodeProps<FNode>) {
  return <TextNode id={id} data={data as Extract<Data, { kind: 'handover' }>} kind="Handover" label="Text before a person takes over" />;
}

function ConditionNode({ id, data }: NodeProps<FNode>) {
  const { updateNodeData } = useReactFlow();
  const g = useContext(GraphContext);
  const d = data as Extract<Data, { kind: 'condition' }>;
  const set = (i: number, patch: Partial<Rule>): void => updateNodeData(id, { rules: d.rules.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
  // Rules come and go with their handles: React Flow measures them again.
  const updateNodeInternals = useUpdateNodeInternals();
  useEffect(() => updateNodeInternals(id), [d.rules.length, id, updateNodeInternals]);
  return (
    <div className={`fn fn-condition${hasError(g, id)}`}>
      <Handle type="target" position={Position.Left} />
      <Title id={id} kind="Condition" />
      {d.rules.map((r, i) => (
        <div className="fn-rule" key={i}>
          <div className="fn-rule-test">
            <select className="nodrag" aria-label={`rule ${i + 1} kind of ${id}`} value={r.kind} onChange={(e) => set(i, { kind: e.target.value as RuleKind })}>
              <option value="contains">contains</option>
              <option value="equals">equals</option>
              <option value="regex">regex</option>
              <option value="any">any</option>
            </select>
            {r.kind !== 'any' && <input className="nodrag" aria-label={`rule ${i + 1} value of ${id}`} value={r.value} onChange={(e) => set(i, { value: e.target.value })} />}
            <button type="button" className="nodrag small" aria-label={`remove rule ${i + 1} of ${id}`} onClick={() => g.removeRule(id, i)}>
              ×
            </button>
          </div>
          <NextSelect id={id} handle={`rule-${i}`} label="→" />
          <Handle type="source" position={Position.Right} id={`rule-${i}`} />
        </div>
      ))}
      <button type="button" className="nodrag small" aria-label={`add a rule to ${id}`} onClick={() => updateNodeData(id, { rules: [...d.rules, { kind: 'contains', value: '', extra: {} }] })}>
        + rule
      </button>
      <div className="fn-rule">
        <NextSelect id={id} handle="else" label="Else" />
        <Handle type="source" position={Position.Right} id="else" />
      </div>
    </div>
  );
}

const nodeTypes = { message: MessageNode, condition: ConditionNode, handover: HandoverNode };
const edgeTypes = { routed: RoutedEdge };
/** Every edge: one that stays visible (RoutedEdge), with an arrow at its end. */
const EDGE_OPTIONS = { type: 'routed', markerEnd: { type: MarkerType.ArrowClosed, width: 18, height: 18 } };

const extrasOf = (o: Record<string, unknown>, also: string[] = []): Extra =>
  Object.fromEntries(Object.entries(o).filter(([k]) => (k.startsWith('_') && k !== POSITION) || also.includes(k)));

function toDoc(name: string, start: string, nodes: FNode[], edges: Edge[], flowExtra: Extra): FlowDoc {
  const target = (source: string, handle: string): string | undefined => edges.find((e) => e.source === source && (e.sourceHandle ?? 'next') === handle)?.target;
  const doc: FlowDoc = { ...flowExtra, name, start, nodes: {} };
  for (const n of nodes) {
    const d = n.data as Data;
    const place = { [POSITION]: { x: Math.round(n.position.x), y: Math.round(n.position.y) } };
    const next = target(n.id, 'next');
    if (d.kind === 'message') doc.nodes[n.id] = { type: 'message', ...d.extra, text: d.text, ...(next ? { next } : {}), ...place };
    else if (d.kind === 'handover') doc.nodes[n.id] = { type: 'handover', ...d.extra, ...(d.text ? { text: d.text } : {}), ...(next ? { next } : {}), ...place };
    else {
      const els = target(n.id, 'else');
      const rules = d.rules.map((r, i) => {
        const to = target(n.id, `rule-${i}`);
        return { ...(r.kind === 'any' ? { any: true } : { [r.kind]: r.value }), ...r.extra, ...(to ? { next: to } : {}) };
      });
      doc.nodes[n.id] = { type: 'condition', ...d.extra, rules, ...(els ? { else: els } : {}), ...place };
    }
  }
  return doc;
}

function fromDoc(doc: FlowDoc): { nodes: FNode[]; edges: Edge[]; placed: boolean } {
  const nodes: FNode[] = [];
  const edges: Edge[] = [];
  let placed = true;
  const edge = (source: string, sourceHandle: string, target: unknown): void => {
    if (typeof target === 'string') edges.push({ id: `${source}-${sourceHandle}-${target}`, source, sourceHandle, target, ...EDGE_OPTIONS });
  };
  Object.entries(doc.nodes).forEach(([id, n], i) => {
    const p = n[POSITION] as { x?: unknown; y?: unknown } | undefined;
    const known = p && typeof p.x === 'number' && typeof p.y === 'number';
    if (!known) placed = false;
    const position = known ? { x: p.x as number, y: p.y as number } : { x: 40 + (i % 3) * 360, y: 40 + Math.floor(i / 3) * 300 };
    const extra = extrasOf(n, ['description']);
    if (n.type === 'condition') {
      const rules = (n.rules as Record<string, unknown>[]).map((r, j) => {
        const kind = (['contains', 'equals', 'regex', 'any'] as const).find((k) => k in r) ?? 'any';
        edge(id, `rule-${j}`, r.next);
        return { kind, value: kind === 'any' ? '' : String(r[kind]), extra: extrasOf(r) };
      });
      edge(id, 'else', n.else);
      nodes.push({ id, type: 'condition', position, data: { kind: 'condition', rules, extra } });
    } else {
      edge(id, 'next', n.next);
      const kind = n.type === 'handover' ? 'handover' : 'message';
      nodes.push({ id, type: kind, position, data: { kind, text: typeof n.text === 'string' ? n.text : '', extra } });
    }
  });
  return { nodes, edges, placed };
}

/** The document without the places of its nodes: what a save changes besides the layout. */
const withoutPlaces = (doc: FlowDoc): string =>
  JSON.stringify({ ...doc, nodes: Object.fromEntries(Object.entries(doc.nodes).map(([k, { [POSITION]: _p, ...rest }]) => [k, rest])) });

/** Nodes React Flow has measured (fitting the view before that would leave new ones out). */
const measuredCount = (s: ReactFlowState): number => {
  let n = 0;
  s.nodeLookup.forEach((x) => {
    if (x.measured?.width) n += 1;
  });
  return n;
};

function Builder({ id }: { id: string }) {
  const [nodes, setNodes] = useState<FNode[]>([]);
  const [edges, setEdges] = useState<Edge[]>([]);
  const [name, setName] = useState('panel flow');
  const [flowExtra, setFlowExtra] = useState<Extra>({});
  const [start, setStart] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [loaded, setLoaded] = useState(false);
  const [saved, setSaved] = useState('');
  const [savedPlaces, setSavedPlaces] = useState('');
  const [fitted, setFitted] = useState(0);
  // A flow without positions (from a file, from the API) is laid out once its nodes are measured.
  const [layoutPending, setLayoutPending] = useState(false);

  const adopt = useCallback((flow: FlowDoc | null) => {
    const g = flow ? fromDoc(flow) : { nodes: [], edges: [], placed: true };
    setNodes(g.nodes);
    setEdges(g.edges);
    setName(flow?.name ?? 'panel flow');
    setStart(flow?.start ?? '');
    setFlowExtra(flow ? extrasOf(flow, ['description']) : {});
    setErrors({});
    setFitted(0);
    setLayoutPending(!g.placed && g.nodes.length > 0);
    const doc = flow ? toDoc(flow.name, flow.start, g.nodes, g.edges, extrasOf(flow, ['description'])) : null;
    setSaved(doc ? withoutPlaces(doc) : '');
    setSavedPlaces(doc && g.placed ? JSON.stringify(doc) : '');
  }, []);

  useEffect(() => {
    // `optional`: no flow yet is an answer, not a 404 in the browser's console.
    api<{ flow: FlowDoc | null }>('GET', `/api/${enc(id)}/flow?optional=true`).then(
      (r) => {
        adopt(r.flow);
        setLoaded(true);
      },
      (err: unknown) => {
        if (!(err instanceof ApiError && err.status === 404)) setError(errorText(err));
        setLoaded(true);
      },
    );
  }, [id, adopt]);

  // Every node in sight once all are measured, when the flow is loaded or a node is added or removed.
  const { fitView } = useReactFlow();
  const count = nodes.length;
  const measured = useStore(measuredCount);

  // A new width (a phone turned, a window resized) fits the view again.
  const canvas = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = canvas.current;
    if (!el) return;
    let width = Math.round(el.clientWidth);
    const observer = new ResizeObserver(() => {
      const w = Math.round(el.clientWidth);
      if (w !== width) {
        width = w;
        setFitted(0);
      }
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  // A narrow canvas (a phone) opens readable at the start node instead: the rest is a pan away.
  const startNode = nodes.some((n) => n.id === start) ? start : (nodes[0]?.id ?? '');
  const { getNodes } = useReactFlow();
  const arrange = useCallback(() => {
    const sized = getNodes().map((n) => ({ id: n.id, width: n.measured?.width ?? 280, height: n.measured?.height ?? 160 }));
    const places = layoutFlow(sized, edges, startNode);
    setNodes((ns) => ns.map((n) => ({ ...n, position: places.get(n.id) ?? n.position })));
    setFitted(0);
  }, [getNodes, edges, startNode]);
  useEffect(() => {
    if (count === 0 || measured !== count) return;
    if (layoutPending) {
      setLayoutPending(false);
      arrange();
      return;
    }
    if (fitted === count) return;
    // A narrow canvas (a phone) opens at the start node and the nodes it leads to, readable; a
    // wide one shows every node.
    const narrow = (canvas.current?.clientWidth ?? 1000) < 600;
    const next = new Set(edges.filter((e) => e.source === startNode).map((e) => e.target));
    const first = [{ id: startNode }, ...[...next].slice(0, 2).map((nid) => ({ id: nid }))];
    const options = narrow ? { nodes: first, padding: 0.06, maxZoom: 0.9, minZoom: 0.25 } : { padding: 0.12, maxZoom: 1, minZoom: 0.2 };
    void Promise.resolve(fitView(options)).then(() => setFitted(count));
  }, [count, measured, fitted, fitView, startNode, layoutPending, arrange, edges]);

  const onNodesChange = useCallback((c: NodeChange<FNode>[]) => setNodes((ns) => applyNodeChanges(c, ns)), []);
  const onEdgesChange = useCallback((c: EdgeChange[]) => setEdges((es) => applyEdgeChanges(c, es)), []);
  // One edge per source handle: a new connection replaces the old one.
  const sameExit = (e: Edge, source: string, handle: string | null | undefined): boolean => e.source === source && (e.sourceHandle ?? 'next') === (handle ?? 'next');
  const onConnect = useCallback((c: Connection) => setEdges((es) => addEdge({ ...c, ...EDGE_OPTIONS }, es.filter((e) => !sameExit(e, c.source, c.sourceHandle)))), []);
  const onNodesDelete = useCallback((gone: FNode[]) => {
    setStart((s) => (gone.some((n) => n.id === s) ? '' : s));
  }, []);

  const graph = useMemo<Graph>(
    () => ({
      errors,
      start,
      ids: nodes.map((n) => n.id),
      targetOf: (source, handle) => edges.find((e) => sameExit(e, source, handle))?.target ?? '',
      connect: (source, handle, target) =>
        setEdges((es) => [...es.filter((e) => !sameExit(e, source, handle)), ...(target ? [{ id: `${source}-${handle}-${target}`, source, sourceHandle: handle, target, ...EDGE_OPTIONS }] : [])]),
      removeNode: (nid) => {
        setNodes((ns) => ns.filter((n) => n.id !== nid));
        setEdges((es) => es.filter((e) => e.source !== nid && e.target !== nid));
        setStart((s) => (s === nid ? '' : s));
      },
      removeRule: (nid, index) => {
        setNodes((ns) => ns.map((n) => (n.id === nid && n.data.kind === 'condition' ? { ...n, data: { ...n.data, rules: n.data.rules.filter((_, j) => j !== index) } } : n)));
        // The rules after it move up one place, and their edges with them.
        setEdges((es) =>
          es.flatMap((e): Edge[] => {
            const m = e.source === nid ? /^rule-(\d+)$/.exec(e.sourceHandle ?? '') : null;
            if (!m) return [e];
            const j = Number(m[1]);
            if (j === index) return [];
            if (j < index) return [e];
            return [{ ...e, id: `${nid}-rule-${j - 1}-${e.target}`, sourceHandle: `rule-${j - 1}`, ...EDGE_OPTIONS }];
          }),
        );
      },
    }),
    [errors, start, nodes, edges],
  );

  const add = (kind: Data['kind']): void => {
    let n = nodes.length + 1;
    while (nodes.some((x) => x.id === `${kind}-${n}`)) n += 1;
    const nid = `${kind}-${n}`;
    const data: Data = kind === 'condition' ? { kind, rules: [{ kind: 'contains', value: '', extra: {} }], extra: {} } : { kind, text: '', extra: {} };
    const i = nodes.length;
    setNodes((ns) => [...ns, { id: nid, type: kind, position: { x: 40 + (i % 3) * 360, y: 40 + Math.floor(i / 3) * 300 }, data }]);
    if (!start) setStart(nid);
  };

  const startId = nodes.some((n) => n.id === start) ? start : (nodes[0]?.id ?? '');
  const doc = toDoc(name, startId, nodes, edges, flowExtra);
  const dirty = loaded && withoutPlaces(doc) !== saved && !(nodes.length === 0 && saved === '');
  const moved = loaded && !dirty && nodes.length > 0 && JSON.stringify(doc) !== savedPlaces;

  const save = async (): Promise<void> => {
    setErrors({});
    setMessage('');
    setError('');
    if (nodes.length === 0) {
      setError('Add a node first.');
      return;
    }
    try {
      await api('PUT', `/api/${enc(id)}/flow`, doc);
      setStart(startId);
      setSaved(withoutPlaces(doc));
      setSavedPlaces(JSON.stringify(doc));
      setMessage('Saved: the flow is active.');
    } catch (err) {
      const node = err instanceof ApiError && typeof err.detail.node === 'string' ? err.detail.node : null;
      if (node && nodes.some((n) => n.id === node)) {
        setErrors({ [node]: err instanceof Error ? err.message : String(err) });
        // On a narrow canvas the node at fault may be out of sight: bring it in.
        if ((canvas.current?.clientWidth ?? 1000) < 600) void fitView({ nodes: [{ id: node }], padding: 0.1, maxZoom: 0.9 });
      }
      setError(errorText(err));
    }
  };

  const clear = async (): Promise<void> => {
    setMessage('');
    setError('');
    try {
      await api('DELETE', `/api/${enc(id)}/flow`);
      adopt(null);
      setMessage('Cleared: no flow is active; the bot does not answer.');
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <div className="builder">
      <div className="toolbar">
        <div className="row wrap">
          <button type="button" onClick={() => add('message')}>
            Add message
          </button>
          <button type="button" onClick={() => add('condition')}>
            Add condition
          </button>
          <button type="button" onClick={() => add('handover')}>
            Add handover
          </button>
        </div>
        <div className="row wrap">
          <label>
            Flow name
            <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
          </label>
          <label>
            Start
            <select aria-label="start node" value={startId} onChange={(e) => setStart(e.target.value)}>
              {nodes.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.id}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="primary" onClick={() => void save()}>
            Save and activate
          </button>
          <button type="button" onClick={arrange} disabled={nodes.length === 0} title="Lay the nodes out again, left to right">
            Arrange
          </button>
          <ConfirmButton label="Clear flow" question="Remove the flow? The bot stops answering." yes="Yes, clear" group="confirm clear" onYes={() => void clear()} />
        </div>
      </div>
      {/* One line for the state and what an action said: its height never changes, so the canvas never moves. */}
      <div className="flow-status">
        <p className="muted" aria-live="polite" data-testid="flow-state">
          {!loaded ? 'Loading…' : nodes.length === 0 ? (message ? '' : 'No flow yet: add a node to begin.') : dirty ? 'Unsaved changes.' : message ? '' : moved ? 'Saved (the layout changed: save to keep it).' : 'Saved.'}
        </p>
        <p className={message ? 'ok' : error ? 'error' : ''} role={error ? 'alert' : 'status'}>
          {message || error}
        </p>
      </div>
      <div className="canvas" data-fitted={fitted} ref={canvas}>
        <GraphContext.Provider value={graph}>
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            edgeTypes={edgeTypes}
            defaultEdgeOptions={EDGE_OPTIONS}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            onNodesDelete={onNodesDelete}
            defaultViewport={{ x: 0, y: 0, zoom: 1 }}
            minZoom={0.2}
            maxZoom={1.5}
            deleteKeyCode={['Backspace', 'Delete']}
            aria-label="flow graph"
          >
            <Background />
            <Controls />
          </ReactFlow>
        </GraphContext.Provider>
      </div>
      <div className="muted help">
        <p>
          Texts may use <code>{'{{name}}'}</code> (the sender's name) and <code>{'{{phone}}'}</code>. Saving checks the flow as <code>PUT /flow</code> does and activates it; an error shows on its node.
        </p>
        <p>
          Connect with the mouse by dragging from a node's right handle to another node's left handle, or pick the target in the node's <em>Then</em>, <em>→</em> or <em>Else</em> list (the keyboard's way). Remove a node with its × button, or select it and press Delete.
        </p>
        <p>Drag the background to move around; zoom with the wheel, a pinch or the + and − buttons; the fit-view button below them shows every node.</p>
      </div>
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
