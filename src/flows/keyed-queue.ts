/**
 * Runs tasks one after another per key (a chat) and concurrently across keys, so one chat's
 * messages are handled in the order they arrived while other chats are not held up.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, { tail: Promise<void>; pending: number }>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly maxPendingPerKey: number,
    private readonly onError: (err: unknown, key: string) => void,
  ) {}

  /** Queues `task` behind the key's earlier ones; false (and not queued) when the key is full. */
  push(key: string, task: () => Promise<void>): boolean {
    const entry = this.tails.get(key) ?? { tail: Promise.resolve(), pending: 0 };
    if (entry.pending >= this.maxPendingPerKey) return false;
    entry.pending++;
    entry.tail = entry.tail
      .then(task)
      .catch((err: unknown) => this.onError(err, key))
      .finally(() => {
        entry.pending--;
        if (entry.pending === 0 && this.tails.get(key) === entry) {
          this.tails.delete(key);
          if (this.tails.size === 0) this.wakeIdle();
        }
      });
    this.tails.set(key, entry);
    return true;
  }

  get size(): number {
    return this.tails.size;
  }

  /** Resolves once no task is queued or running. */
  idle(): Promise<void> {
    if (this.tails.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
