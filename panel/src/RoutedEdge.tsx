import { BaseEdge, getBezierPath, useNodes, type EdgeProps } from '@xyflow/react';

/** How far a back edge keeps from the nodes it goes around. */
const GAP = 26;
const RADIUS = 10;

/** A polyline with rounded corners. */
function rounded(points: Array<[number, number]>): string {
  let d = `M ${points[0]![0]} ${points[0]![1]}`;
  for (let i = 1; i < points.length - 1; i += 1) {
    const [px, py] = points[i - 1]!;
    const [x, y] = points[i]!;
    const [nx, ny] = points[i + 1]!;
    const r = Math.min(RADIUS, Math.hypot(x - px, y - py) / 2, Math.hypot(nx - x, ny - y) / 2);
    const ax = x - (Math.sign(x - px) * r || 0);
    const ay = y - (Math.sign(y - py) * r || 0);
    const bx = x + (Math.sign(nx - x) * r || 0);
    const by = y + (Math.sign(ny - y) * r || 0);
    d += ` L ${ax} ${ay} Q ${x} ${y} ${bx} ${by}`;
  }
  const last = points[points.length - 1]!;
  return `${d} L ${last[0]} ${last[1]}`;
}

/**
 * An edge that stays visible: forward (to a node on the right) it is a curve between the columns;
 * backward (a menu that repeats, a node to the left or straight below) it goes out to the right,
 * down below every node it would cross, across, and in from the left, never under a node.
 */
export function RoutedEdge(props: EdgeProps) {
  const { id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, markerEnd, style, interactionWidth } = props;
  const nodes = useNodes();
  if (targetX > sourceX + 2 * GAP) {
    const [path] = getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition });
    return <BaseEdge id={id} path={path} {...(markerEnd ? { markerEnd } : {})} {...(style ? { style } : {})} {...(interactionWidth !== undefined ? { interactionWidth } : {})} />;
  }
  const left = Math.min(sourceX, targetX) - 2 * GAP;
  const right = Math.max(sourceX, targetX) + 2 * GAP;
  let bottom = Math.max(sourceY, targetY);
  for (const n of nodes) {
    const w = n.measured?.width ?? n.width ?? 280;
    const h = n.measured?.height ?? n.height ?? 160;
    if (n.position.x + w >= left && n.position.x <= right) bottom = Math.max(bottom, n.position.y + h);
  }
  const y = bottom + GAP;
  const path = rounded([
    [sourceX, sourceY],
    [sourceX + GAP, sourceY],
    [sourceX + GAP, y],
    [targetX - GAP, y],
    [targetX - GAP, targetY],
    [targetX, targetY],
  ]);
  return <BaseEdge id={id} path={path} className="back-edge" {...(markerEnd ? { markerEnd } : {})} {...(style ? { style } : {})} {...(interactionWidth !== undefined ? { interactionWidth } : {})} />;
}
