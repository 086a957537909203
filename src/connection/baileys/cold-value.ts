/** How long a cold value stays parsed after its last use. */
export const KEEP_PARSED_MS = 30_000;

/**
 * A value kept as the JSON text it is stored as, and parsed only while it is in use: from its first
 * use until `keepMs` pass without one. Changes go to the parsed value (`use()` returns it; call
 * `changed()` after), and `text()` serialises them once, whenever it is next asked for the text or
 * the value cools down, so nothing changed is ever dropped.
 *
 * Why: a session's account book (contact names by phone JID and by LID, the address book) was a Map
 * and a Set of ~1,450 strings for a realistic account of 300 contacts, held for as long as the
 * session is connected and marked by every full collection of the heap, while it is read only when a
 * contact is looked up or a push name arrives. As text it is one string: the very string the auth
 * state stores. One timer per value, and only while it is parsed. A session receiving messages
 * keeps its book parsed (Baileys reports a push name with nearly every message); idle sessions,
 * most of a large host's, are the ones it shrinks.
 */
export class ColdValue<T> {
  private parsed: T | null = null;
  private dirty = false;
  private usedAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private stored: string,
    private readonly parse: (text: string) => T,
    private readonly serialise: (value: T) => string,
    private readonly keepMs = KEEP_PARSED_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The value, parsed if it was cold; it stays parsed until `keepMs` without a use. */
  use(): T {
    this.usedAt = this.now();
    if (this.parsed === null) {
      this.parsed = this.parse(this.stored);
      this.arm(this.keepMs);
    }
    return this.parsed;
  }

  /** The value returned by use() was changed. */
  changed(): void {
    this.dirty = true;
  }

  /** The JSON text of the value as it is now. */
  text(): string {
    if (this.dirty && this.parsed !== null) {
      this.stored = this.serialise(this.parsed);
      this.dirty = false;
    }
    return this.stored;
  }

  /** Whether the value is parsed now (for tests). */
  get isParsed(): boolean {
    return this.parsed !== null;
  }

  /** Drops the parsed form now, keeping what changed. */
  cool(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.text();
    this.parsed = null;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      const idle = this.now() - this.usedAt;
      if (idle < this.keepMs) this.arm(this.keepMs - idle);
      else this.cool();
    }, ms);
    this.timer.unref();
  }
}
