/**
 * Copies out the byte arrays of a value that are small views into a large buffer, so that what a
 * session keeps does not keep the buffer it was cut from.
 *
 * Baileys hands the key store values that point into the blobs they were decoded from: each
 * `valueMac` of an app-state version (`app-state-sync-version`, one per address-book entry and
 * setting) is `record.value.blob.subarray(-32)`, a view into the whole downloaded snapshot or
 * patch (those are now kept as JSON text instead: COLD in auth-state.ts); identity keys and trust
 * tokens are views into the WebSocket frame they came in. Kept for
 * the life of the session, each view kept its whole source alive: after a first sync a realistic
 * account held ~190 KB of such buffers (`external` after pairing 237 MiB for 1,000 sessions, 46
 * MiB for the same sessions read back after a restart).
 *
 * A view is copied when its buffer holds at least 1 KiB besides it. That includes a slab of Node's
 * Buffer pool (`Buffer.poolSize`: 8 KiB on Node 20, 64 KiB on Node 22 and later): keys kept for the
 * session each held a slab that frames and parsing had filled and let go. On Node 24 that made
 * `external` after pairing 3.7 times Node 20's; copied out, 200 sessions paired on Node 24 held
 * 77.9 MiB external instead of 119.8 (`BENCH_ONLY=sessions BENCH_SESSIONS=200
 * BENCH_SESSIONS_CURVE=200 BENCH_SESSIONS_BUSY=0 BENCH_PAIRING_SEND_RATE=0 scripts/with-node.sh 24
 * npm run bench`). A heap snapshot of 200 paired sessions on Node 20 (2026-11-29) found Baileys'
 * sender keys (their JSON in a Buffer) each still holding a whole 8 KiB slab: a value that is itself
 * a view was copied with Buffer.from(), which put the copy in a pool slab again (15.3 MiB for 1,834
 * of them, 2.9 MiB for the same keys read back after a restart). Copies are unpooled now; and the
 * rule, "four times the view" before, also copies a 3 KB view out of an 8 KiB slab. All copies of
 * one call share one new buffer of their own (so the views of our own earlier copies are copied
 * again, together with what is new, and the earlier home goes). The value is changed in place (the
 * same bytes, in a smaller home) and returned.
 */
/** Bytes a view's buffer holds besides the view from which it is copied out. */
const MIN_WASTE = 1024;

interface Found {
  holder: Record<string | number, unknown>;
  key: string | number;
  view: Uint8Array;
}

function wasteful(view: Uint8Array): boolean {
  return view.buffer.byteLength - view.byteLength >= MIN_WASTE;
}

function collect(value: unknown, holder: Record<string | number, unknown> | null, key: string | number, found: Found[], depth: number): void {
  if (typeof value !== 'object' || value === null || depth > 8) return;
  if (ArrayBuffer.isView(value)) {
    if (holder !== null && value instanceof Uint8Array && wasteful(value)) found.push({ holder, key, view: value });
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) collect(value[i], value as unknown as Record<number, unknown>, i, found, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const k of Object.keys(record)) collect(record[k], record, k, found, depth + 1);
}

export function compactViews<T>(value: T): T {
  if (value instanceof Uint8Array) {
    if (!wasteful(value)) return value;
    // Unpooled, as below: Buffer.from() would put a small copy in a pool slab again.
    const copy = Buffer.allocUnsafeSlow(value.byteLength);
    copy.set(value);
    return (value instanceof Buffer ? copy : new Uint8Array(copy.buffer, copy.byteOffset, copy.byteLength)) as T;
  }
  const found: Found[] = [];
  collect(value, null, '', found, 0);
  if (found.length === 0) return value;
  // One copy per view, however many places hold it.
  const copies = new Map<Uint8Array, Uint8Array>();
  let total = 0;
  for (const f of found) {
    if (copies.has(f.view)) continue;
    copies.set(f.view, f.view);
    total += f.view.byteLength;
  }
  // Unpooled: a home of their own, freed when the last of them goes.
  const home = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const view of copies.keys()) {
    home.set(view, at);
    const bytes = home.subarray(at, at + view.byteLength);
    at += view.byteLength;
    copies.set(view, view instanceof Buffer ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }
  for (const f of found) f.holder[f.key] = copies.get(f.view)!;
  return value;
}
