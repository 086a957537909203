/** A plain JSON object (not null, not an array): the first check of every stored-shape guard. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
