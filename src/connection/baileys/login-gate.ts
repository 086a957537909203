/**
 * At most `limit` WhatsApp logins in flight at once, all instances of a daemon together: a socket
 * holds a place from its creation until it is open, shows a QR, or closes. Start-up, reconnects
 * after a dropped network and new instances all queue here in order, so a restart or an outage of
 * a thousand sessions never becomes a thousand simultaneous handshakes (a thundering herd that
 * WhatsApp, and the daemon's own CPU, would see).
 */
export class LoginGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }

  /** Logins holding a place now. */
  get inFlight(): number {
    return this.active;
  }

  /** Logins waiting for a place. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves with the function that gives the place back (idempotent) once one is free. */
  acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        this.active += 1;
        let held = true;
        resolve(() => {
          if (!held) return;
          held = false;
          this.active -= 1;
          this.waiting.shift()?.();
        });
      };
      if (this.active < this.limit) grant();
      else this.waiting.push(grant);
    });
  }
}
