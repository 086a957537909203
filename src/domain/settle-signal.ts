/**
 * Waiting for a state to be reached without polling: whoever changes the state calls `wake()`,
 * and each waiter checks its condition again. Used by the credit stores, where deleting an
 * instance or closing waits for every send in flight to settle: a 5 ms poll cost a timer and a
 * wake-up of the event loop 200 times a second for as long as a send was in flight.
 */
export class SettleSignal {
  private readonly waiters = new Set<() => void>();

  /** The state may have changed: every waiter checks its condition again. */
  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once `done()` holds, or after `ms` whether or not it does. */
  async until(done: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const finish = (): void => {
          clearTimeout(timer);
          this.waiters.delete(finish);
          resolve();
        };
        const timer = setTimeout(finish, left);
        this.waiters.add(finish);
      });
    }
  }
}
