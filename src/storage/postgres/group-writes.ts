interface Queued<T, R> {
  readonly item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

interface Line<T, R> {
  queue: Array<Queued<T, R>>;
  writing: boolean;
}

/**
 * Group commit for one kind of write: writes of one key (an instance, and whether they must be
 * durable) that arrive while a batch of that key is being written go together in the next batch:
 * one statement, one round trip and one commit for all of them, and each caller's promise settles
 * with its own result once its batch is stored. Nothing waits on a timer: a lone write goes at the
 * next turn of the event loop, and batches grow only as writes pile up behind a round trip.
 *
 * Batches are per key, never across instances: the fencing triggers (migrations 003 and 008) fail a
 * whole statement when one of its instances' leases is stale, which must not fail another's write.
 */
export class GroupWrites<T, R> {
  private readonly lines = new Map<string, Line<T, R>>();

  /**
   * @param write Stores a batch (in the order given) and answers one result per item, in order.
   * @param max The most items in one statement (PostgreSQL binds at most 65,535 parameters; a
   *   batch's arrays are one parameter each, so this bounds the statement's size, not its count).
   */
  constructor(
    private readonly write: (key: string, items: T[]) => Promise<R[]>,
    private readonly max = 500,
  ) {}

  add(key: string, item: T): Promise<R> {
    let line = this.lines.get(key);
    if (!line) {
      line = { queue: [], writing: false };
      this.lines.set(key, line);
    }
    const l = line;
    return new Promise<R>((resolve, reject) => {
      l.queue.push({ item, resolve, reject });
      this.kick(key, l);
    });
  }

  /** Batches waiting or being written (for tests and close). */
  get busy(): boolean {
    for (const l of this.lines.values()) if (l.writing || l.queue.length > 0) return true;
    return false;
  }

  private kick(key: string, line: Line<T, R>): void {
    if (line.writing) return;
    if (line.queue.length === 0) {
      this.lines.delete(key);
      return;
    }
    line.writing = true;
    setImmediate(() => void this.flush(key, line));
  }

  private async flush(key: string, line: Line<T, R>): Promise<void> {
    const batch = line.queue.splice(0, this.max);
    try {
      const results = await this.write(
        key,
        batch.map((q) => q.item),
      );
      batch.forEach((q, i) => q.resolve(results[i] as R));
    } catch (err) {
      for (const q of batch) q.reject(err);
    } finally {
      line.writing = false;
      this.kick(key, line);
    }
  }
}
