/**
 * The API key of an instance created a moment ago: the list goes to the new instance's page,
 * which shows the key there once (it is never in a URL or in storage).
 */
let pending: { id: string; key: string } | null = null;

export function keepCreatedKey(id: string, key: string): void {
  pending = { id, key };
}

/** The key of `id`, once: taken by the page that shows it. */
export function takeCreatedKey(id: string): string | null {
  if (pending?.id !== id) return null;
  const { key } = pending;
  pending = null;
  return key;
}
