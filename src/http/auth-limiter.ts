import { GatewayError } from '../domain/errors.js';

/**
 * Counts failed authentications per client address in a fixed window. Past the limit, further
 * failures are answered 429 (with Retry-After) instead of 401. A valid key is never refused: the
 * limiter is only asked after a key failed.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Records a failure from `address`; throws RATE_LIMITED once it is over the limit. */
  fail(address: string): void {
    const now = this.now();
    this.sweep(now);
    let w = this.windows.get(address);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(address, w);
    }
    w.count += 1;
    if (w.count > this.limit) {
      const retryAfter = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
      throw new GatewayError('RATE_LIMITED', 'too many failed authentication attempts from this address', { retryAfter });
    }
  }

  private sweep(now: number): void {
    // Keeps memory bounded under a spray of addresses.
    if (now - this.lastSweep < this.windowMs && this.windows.size < 100_000) return;
    this.lastSweep = now;
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}
