/**
 * Serialises writes of one file and merges the requests that arrive while a write runs into a
 * single next write. `request()` resolves once a write that started after the call has finished,
 * so the caller's change is on disk, however many callers share that write.
 */
export class CoalescingWriter {
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(private readonly write: () => Promise<void>) {}

  request(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.running) return this.start();
    const after = this.running.catch(() => undefined);
    this.queued = after.then(() => {
      this.queued = null;
      return this.start();
    });
    return this.queued;
  }

  /** Resolves when no write is running or queued. */
  async flush(): Promise<void> {
    while (this.running || this.queued) await (this.queued ?? this.running)!.catch(() => undefined);
  }

  private start(): Promise<void> {
    const p = this.write().finally(() => {
      if (this.running === p) this.running = null;
    });
    this.running = p;
    return p;
  }
}
