interface Queued<T, R> {
  readonly item: T;
  readonly done: Promise<R>;
  resolve(result: R): void;
  reject(err: unknown): void;
}

interface Line<T, R> {
  queue: Array<Queued<T, R>>;
  /** idle: nothing scheduled; waiting: a timer for deferred writes; soon: at the next turn; writing: a batch out. */
  state: 'idle' | 'waiting' | 'soon' | 'writing';
  timer: ReturnType<typeof setTimeout> | null;
  /** The batch being written (what `drained` waits for when nothing is queued). */
  batch: Promise<void> | null;
}

/** A write still in the queue (not yet in a batch being written): it may be changed until then. */
export interface Waiting<T, R> {
  readonly item: T;
  /** Settles once the batch it goes in is stored. */
  readonly done: Promise<R>;
}

/**
 * Group commit for one kind of write: writes of one key (an instance) that arrive while a batch of
 * that key is being written go together in the next batch: one statement, one round trip and one
 * commit for all of them, and each caller's promise settles with its own result once its batch is
 * stored. A write goes at the next turn of the event loop, and batches grow as writes pile up behind
 * a round trip; a deferred write (`deferMs`) waits up to that long for company, or for a change
 * made to it while it waits (see `waiting`), unless another write or `now` sends it sooner.
 *
 * Batches are per key, never across instances: the fencing trigger (migrations 003 and 008) fails
 * a whole statement when one of its instances' leases is stale, which must not fail another's write.
 */
export class GroupWrites<T, R> {
  private readonly lines = new Map<string, Line<T, R>>();

  /**
   * @param write Stores a batch (in the order given) and answers one result per item, in order.
   * @param alone Whether a batch that failed with `err` is tried again one write at a time: an
   *   error of one write's data (a value the database refuses) then fails that write only, as it
   *   would have unbatched; an outage or a stale lease fails them all at once.
   * @param max The most items in one statement (a batch's arrays are one parameter each, so this
   *   bounds the statement's size, not its parameter count).
   * @param together Whether `item` may go in the batch that `first` opens (the writes of another
   *   lease epoch go in the next one: a stale epoch fails only its own writes).
   */
  constructor(
    private readonly write: (key: string, items: T[]) => Promise<R[]>,
    private readonly alone: (err: unknown) => boolean = () => false,
    private readonly max = 500,
    private readonly together: (first: T, item: T) => boolean = () => true,
  ) {}

  add(key: string, item: T, deferMs = 0): Promise<R> {
    let line = this.lines.get(key);
    if (!line) {
      line = { queue: [], state: 'idle', timer: null, batch: null };
      this.lines.set(key, line);
    }
    let resolve!: (r: R) => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<R>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    line.queue.push({ item, done, resolve, reject });
    if (deferMs > 0 && line.state === 'idle') {
      line.state = 'waiting';
      line.timer = setTimeout(() => this.now(key), deferMs);
    } else if (deferMs === 0) this.now(key);
    return done;
  }

  /** The queued write of `key` that `match` finds, while it is not yet being written. */
  waiting(key: string, match: (item: T) => boolean): Waiting<T, R> | undefined {
    const q = this.lines.get(key)?.queue.find((x) => match(x.item));
    return q ? { item: q.item, done: q.done } : undefined;
  }

  /** Whether any key has writes queued or being written. */
  get busy(): boolean {
    return this.lines.size > 0;
  }

  /** Whether `key` has writes queued or being written. */
  pending(key: string): boolean {
    return this.lines.has(key);
  }

  /** Resolves once every write of `key` made before this call is stored (or failed). */
  async drained(key: string): Promise<void> {
    const line = this.lines.get(key);
    if (!line) return;
    const last = line.queue[line.queue.length - 1];
    this.now(key);
    if (last) await last.done.catch(() => undefined);
    else await line.batch?.catch(() => undefined);
  }

  /** Resolves once every write made before this call, of every key, is stored (or failed). */
  async drainedAll(): Promise<void> {
    await Promise.all([...this.lines.keys()].map((k) => this.drained(k)));
  }

  /** Sends the writes of `key` (deferred ones too) at the next turn. */
  now(key: string): void {
    const line = this.lines.get(key);
    if (!line || line.state === 'soon' || line.state === 'writing') return;
    if (line.timer) clearTimeout(line.timer);
    line.timer = null;
    line.state = 'soon';
    setImmediate(() => {
      line.batch = this.flush(key, line);
    });
  }

  private async flush(key: string, line: Line<T, R>): Promise<void> {
    line.state = 'writing';
    const first = line.queue[0]?.item;
    let n = Math.min(1, line.queue.length);
    while (first !== undefined && n < line.queue.length && n < this.max && this.together(first, line.queue[n]!.item)) n += 1;
    const batch = line.queue.splice(0, n);
    try {
      const results = await this.write(
        key,
        batch.map((q) => q.item),
      );
      batch.forEach((q, i) => q.resolve(results[i] as R));
    } catch (err) {
      if (batch.length > 1 && this.alone(err)) {
        for (const q of batch) {
          try {
            q.resolve((await this.write(key, [q.item]))[0] as R);
          } catch (e) {
            q.reject(e);
          }
        }
      } else for (const q of batch) q.reject(err);
    } finally {
      line.state = 'idle';
      line.batch = null;
      if (line.queue.length > 0) this.now(key);
      else this.lines.delete(key);
    }
  }
}
