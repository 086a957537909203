import type { IncomingMessage } from 'node:http';

/**
 * Requests that arrived on the control socket (DATA_DIR/control.sock, mode 0600 in a 0700 dir):
 * only the gateway's own user can open it, who can read the data dir anyway, so they are trusted
 * like the server secret and may use every instance's routes. One set per app, so two daemons in
 * one process never share trust.
 */
export class ControlRequests {
  private readonly trusted = new WeakSet<IncomingMessage>();

  trust(req: IncomingMessage): void {
    this.trusted.add(req);
  }

  has(req: IncomingMessage): boolean {
    return this.trusted.has(req);
  }
}
