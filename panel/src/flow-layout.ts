import dagre from '@dagrejs/dagre';

/** What the layout needs of a node and an edge (React Flow's own types carry more). */
export interface LayoutNode {
  id: string;
  width: number;
  height: number;
}
export interface LayoutEdge {
  source: string;
  target: string;
  /** Several exits of one node may lead to the same node: each is its own edge. */
  id: string;
}

/** Columns left to right, in the order the conversation goes. */
const RANK_SEP = 90;
const NODE_SEP = 36;

/**
 * Positions for a flow drawn without any (a JSON file, a flow made through the API): a layered
 * layout left to right (dagre), so no two nodes overlap and each exit leads to the next column.
 * Edges that go back (a menu that repeats) are drawn below the nodes by the builder's edge, not
 * through them. Returns each node's top-left corner.
 */
export function layoutFlow(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], start: string): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', ranksep: RANK_SEP, nodesep: NODE_SEP, marginx: 20, marginy: 20, ranker: 'longest-path' });
  g.setDefaultEdgeLabel(() => ({}));
  // The start node first, so it lands in the first column even when an edge comes back to it.
  const ordered = [...nodes].sort((a, b) => (a.id === start ? -1 : b.id === start ? 1 : 0));
  for (const n of ordered) g.setNode(n.id, { width: n.width, height: n.height });
  const known = new Set(nodes.map((n) => n.id));
  for (const e of edges) if (known.has(e.source) && known.has(e.target) && e.source !== e.target) g.setEdge(e.source, e.target, {}, e.id);
  dagre.layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const p = g.node(n.id);
    out.set(n.id, { x: Math.round(p.x - n.width / 2), y: Math.round(p.y - n.height / 2) });
  }
  return out;
}
