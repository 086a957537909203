/**
 * A key table whose entries are mostly 64-character latin1 strings under integer ids (a session's
 * one-time pre-keys as key-text.ts packs them): those are kept as 64 bytes each in one Buffer, ids
 * as numbers in one Map, so 812 pre-keys are three objects for the garbage collector instead of
 * 1,624 (a string and an id each), 52 KB outside the heap instead of ~100 KB inside it. Anything
 * else (another id, another text) goes to a plain Map beside them. Iteration gives the packed
 * entries in the order they were first set, then the others.
 *
 * The same subset of Map's interface that AuthStore uses on a key table.
 */
const SLOT = 64;
/** An id kept as a number: what `String(n)` gives back for n up to 999,999,999 (a small integer to V8). */
const NUMERIC_ID = /^(?:0|[1-9]\d{0,8})$/;
// eslint-disable-next-line no-control-regex
const NOT_LATIN1 = /[^\u0000-\u00ff]/;

export class PackedTable {
  private bytes = Buffer.alloc(0);
  private readonly slots = new Map<number, number>();
  private free: number[] = [];
  private used = 0;
  private readonly others = new Map<string, unknown>();

  get size(): number {
    return this.slots.size + this.others.size;
  }

  get(id: string): unknown {
    const slot = NUMERIC_ID.test(id) ? this.slots.get(Number(id)) : undefined;
    if (slot !== undefined) return this.bytes.toString('latin1', slot * SLOT, slot * SLOT + SLOT);
    return this.others.get(id);
  }

  set(id: string, value: unknown): this {
    if (typeof value === 'string' && value.length === SLOT && NUMERIC_ID.test(id) && !NOT_LATIN1.test(value)) {
      const n = Number(id);
      let slot = this.slots.get(n);
      if (slot === undefined) {
        slot = this.free.pop() ?? this.grow();
        this.slots.set(n, slot);
      }
      this.bytes.write(value, slot * SLOT, SLOT, 'latin1');
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
    for (const [n, slot] of this.slots) yield [String(n), this.bytes.toString('latin1', slot * SLOT, slot * SLOT + SLOT)];
    yield* this.others;
  }

  private remove(id: string): boolean {
    if (!NUMERIC_ID.test(id)) return false;
    const n = Number(id);
    const slot = this.slots.get(n);
    if (slot === undefined) return false;
    this.slots.delete(n);
    this.bytes.fill(0, slot * SLOT, slot * SLOT + SLOT);
    this.free.push(slot);
    return true;
  }

  private grow(): number {
    const capacity = this.bytes.length / SLOT;
    if (this.used === capacity) {
      // Outside Node's small-buffer pool: a slab shared with other Buffers would be kept alive by this one.
      const next = Buffer.allocUnsafeSlow(Math.max(64, capacity * 2) * SLOT);
      this.bytes.copy(next);
      next.fill(0, this.bytes.length);
      this.bytes = next;
    }
    return this.used++;
  }
}
