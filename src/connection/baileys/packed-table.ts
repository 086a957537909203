/**
 * A key table whose entries are mostly 64-character latin1 strings under integer ids (a session's
 * one-time pre-keys as key-text.ts packs them): those are kept as 64 bytes each in Buffers of 64
 * slots (4 KB; a table only grows by one, never copied, at most one slot short of 4 KB unused), ids
 * as numbers in one Map, so 812 pre-keys are some 40 objects for the garbage collector instead of
 * 1,624 (a string and an id each), 52 KB outside the heap instead of ~100 KB inside it. Anything
 * else (another id, another text) goes to a plain Map beside them. Iteration gives the packed
 * entries in the order they were first set, then the others.
 *
 * The same subset of Map's interface that AuthStore uses on a key table, and the packed entries as
 * rows of bytes for the stored form (`rows()`, `setRows()`; see auth-state.ts, PACKED_ROWS).
 */
const SLOT = 64;
/** Slots a chunk. */
const CHUNK = 64;
/** An id kept as a number: what `String(n)` gives back for n up to 999,999,999 (a small integer to V8). */
const NUMERIC_ID = /^(?:0|[1-9]\d{0,8})$/;
/** A row of `rows()`: the id as a 32-bit big-endian integer, then the entry's 64 bytes. */
export const ROW = 4 + SLOT;
// eslint-disable-next-line no-control-regex
const NOT_LATIN1 = /[^\u0000-\u00ff]/;

export class PackedTable {
  private readonly chunks: Buffer[] = [];
  private readonly slots = new Map<number, number>();
  private free: number[] = [];
  private used = 0;
  private readonly others = new Map<string, unknown>();

  get size(): number {
    return this.slots.size + this.others.size;
  }

  get(id: string): unknown {
    const slot = NUMERIC_ID.test(id) ? this.slots.get(Number(id)) : undefined;
    if (slot !== undefined) return this.read(slot);
    return this.others.get(id);
  }

  set(id: string, value: unknown): this {
    if (typeof value === 'string' && value.length === SLOT && NUMERIC_ID.test(id) && !NOT_LATIN1.test(value)) {
      const slot = this.slotFor(Number(id));
      this.chunks[Math.floor(slot / CHUNK)]!.write(value, (slot % CHUNK) * SLOT, SLOT, 'latin1');
      this.others.delete(id);
    } else {
      this.remove(id);
      this.others.set(id, value);
    }
    return this;
  }

  delete(id: string): boolean {
    return this.remove(id) || this.others.delete(id);
  }

  *[Symbol.iterator](): IterableIterator<[string, unknown]> {
    for (const [n, slot] of this.slots) yield [String(n), this.read(slot)];
    yield* this.others;
  }

  /** The packed entries, in iteration order, as rows of ROW bytes: one Buffer, no string an entry. */
  rows(): Buffer {
    const out = Buffer.allocUnsafe(this.slots.size * ROW);
    let at = 0;
    for (const [n, slot] of this.slots) {
      out.writeUInt32BE(n, at);
      this.chunks[Math.floor(slot / CHUNK)]!.copy(out, at + 4, (slot % CHUNK) * SLOT, (slot % CHUNK) * SLOT + SLOT);
      at += ROW;
    }
    return out;
  }

  /** The entries that are not packed (ids and values as set). */
  unpacked(): IterableIterator<[string, unknown]> {
    return this.others.entries();
  }

  /**
   * Sets the entries of `rows` as `rows()` gives them, copied byte for byte (no latin1 string made
   * for each). Throws a RangeError, setting nothing, when `rows` is not whole rows or an id is over
   * 999,999,999 (not one `rows()` can give).
   */
  setRows(rows: Uint8Array): this {
    const bytes = Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength);
    if (bytes.length % ROW !== 0) throw new RangeError(`packed rows are ${bytes.length} bytes, not a multiple of ${ROW}`);
    for (let at = 0; at < bytes.length; at += ROW) {
      if (bytes.readUInt32BE(at) > 999_999_999) throw new RangeError(`packed row ${at / ROW} has id ${bytes.readUInt32BE(at)}`);
    }
    for (let at = 0; at < bytes.length; at += ROW) {
      const n = bytes.readUInt32BE(at);
      const slot = this.slotFor(n);
      bytes.copy(this.chunks[Math.floor(slot / CHUNK)]!, (slot % CHUNK) * SLOT, at + 4, at + ROW);
      this.others.delete(String(n));
    }
    return this;
  }

  private remove(id: string): boolean {
    if (!NUMERIC_ID.test(id)) return false;
    const n = Number(id);
    const slot = this.slots.get(n);
    if (slot === undefined) return false;
    this.slots.delete(n);
    this.chunks[Math.floor(slot / CHUNK)]!.fill(0, (slot % CHUNK) * SLOT, (slot % CHUNK) * SLOT + SLOT);
    this.free.push(slot);
    return true;
  }

  /** The slot of packed id `n`, taken (a freed one first) when it has none yet. */
  private slotFor(n: number): number {
    let slot = this.slots.get(n);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.grow();
      this.slots.set(n, slot);
    }
    return slot;
  }

  private read(slot: number): string {
    const at = (slot % CHUNK) * SLOT;
    return this.chunks[Math.floor(slot / CHUNK)]!.toString('latin1', at, at + SLOT);
  }

  private grow(): number {
    // Outside Node's small-buffer pool: a slab shared with other Buffers would be kept alive by this one.
    if (this.used === this.chunks.length * CHUNK) this.chunks.push(Buffer.allocUnsafeSlow(CHUNK * SLOT).fill(0));
    return this.used++;
  }
}
