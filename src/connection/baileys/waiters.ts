/** Promises parked until an event (the first QR, for pairing by code) or a deadline. */
export class Waiters<T> {
  private readonly pending = new Set<{ resolve(value: T): void; reject(err: Error): void }>();

  wait(timeoutMs: number, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(entry);
        reject(onTimeout());
      }, timeoutMs);
      const entry = {
        resolve: (value: T) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (err: Error) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.pending.add(entry);
    });
  }

  resolveAll(value: T): void {
    for (const entry of this.pending) entry.resolve(value);
    this.pending.clear();
  }

  rejectAll(err: Error): void {
    for (const entry of this.pending) entry.reject(err);
    this.pending.clear();
  }
}
