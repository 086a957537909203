import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import { runWhenTurnHasTime, sliceSpent } from '../../domain/time-slice.js';

/**
 * One clock for the keepalives of every session of a daemon: each session still pings WhatsApp at
 * its own interval (keepalive.ts draws 25 to 35 s), but on the clock's ticks, so the pings that fall
 * due within one tick leave together.
 *
 * Why: an idle daemon is mostly woken by keepalives, and each wake-up from idle pays for cold caches
 * (on these 2-core VMs, ~0.5 ms for a ping's cipher and socket write that take a few µs warm).
 * Baileys gives every socket its own setInterval: 1,000 sessions woke the daemon 33 times a second.
 * Measured (/tmp micro benchmark, 300 sockets each sending an AES-GCM frame every 30 s over
 * loopback, one minute): 6.0 ms of CPU a second with a timer per socket, 1.5 with one 1 s tick for
 * all. A tick of 1 s keeps the pings of 1,000 sessions to 33 a second in one turn (a few ms), and
 * 5,000 to 167.
 *
 * Baileys' own keepalive is switched off (KEEPALIVE_OFF_MS) and its two duties are done on this
 * clock by keep-socket-alive.ts, as Baileys does them: a ping (an `iq` of xmlns `w:p`) while the
 * socket is open, and the end of a socket that received nothing for its interval + 5 s (408,
 * "Connection was lost"; the reconnect policy takes it from there).
 *
 * A tick's beats share the event loop's time slices (time-slice.ts): those left when the turn has
 * run SLICE_MS fire on the turns after. While 1,000 accounts paired, one tick's ~33 pings (each a
 * Baileys query: a stack formatted for its timeout, a frame encrypted and written) held the loop
 * for up to 78 ms in one timer callback (CPU profile of `pairing_loop_lag_ms`'s worst gaps).
 */

/** Baileys' keepAliveIntervalMs when this clock keeps the socket alive: setInterval's longest (24.8 days), never reached. */
export const KEEPALIVE_OFF_MS = 2 ** 31 - 1;

interface Beat {
  every: number;
  at: number;
  fire: (tick: number) => void;
  /** Stopped: a beat waiting for a turn with time is not fired. */
  removed: boolean;
}

export class KeepaliveClock {
  /** Tick length: 1 s for Baileys' 30 s default; a thirtieth of a lowered default (tests), at least 5 ms. */
  readonly tickMs: number;
  private tick = 0;
  private readonly due = new Map<number, Set<Beat>>();
  private size = 0;
  private timer: NodeJS.Timeout | null = null;
  /** When tick 0 was (performance.now()): tick n is due at startedAt + n * tickMs, so late timers do not add up. */
  private startedAt = 0;
  private ticking = false;

  constructor(tickMs: number = Math.min(1_000, Math.max(5, Math.round(DEFAULT_CONNECTION_CONFIG.keepAliveIntervalMs / 30)))) {
    this.tickMs = tickMs;
  }

  /** Sessions on the clock. */
  get sessions(): number {
    return this.size;
  }

  /** Calls `fire` (with the tick's number) every `intervalMs`, rounded to whole ticks (at least one), until the returned function is called. */
  every(intervalMs: number, fire: (tick: number) => void): () => void {
    const every = Math.max(1, Math.round(intervalMs / this.tickMs));
    const beat: Beat = { every, at: this.tick + every, fire, removed: false };
    this.place(beat);
    this.size += 1;
    if (this.timer === null && !this.ticking) {
      // Stopped while nobody was on it: the ticks go on from now.
      this.startedAt = performance.now() - this.tick * this.tickMs;
      this.schedule();
    }
    return () => {
      if (beat.removed) return;
      beat.removed = true;
      this.due.get(beat.at)?.delete(beat);
      this.size -= 1;
      if (this.size === 0 && this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
    };
  }

  private place(beat: Beat): void {
    let slot = this.due.get(beat.at);
    if (!slot) {
      slot = new Set();
      this.due.set(beat.at, slot);
    }
    slot.add(beat);
  }

  private schedule(): void {
    const next = this.startedAt + (this.tick + 1) * this.tickMs;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, next - performance.now())).unref();
  }

  /** Runs every tick that is due (more than one after a blocked event loop), then waits for the next. */
  private onTimer(): void {
    this.timer = null;
    this.ticking = true;
    try {
      const due = Math.floor((performance.now() - this.startedAt) / this.tickMs);
      while (this.tick < due && this.size > 0) this.advance();
    } finally {
      this.ticking = false;
    }
    if (this.size > 0) this.schedule();
  }

  private advance(): void {
    this.tick += 1;
    const slot = this.due.get(this.tick);
    if (!slot) return;
    this.due.delete(this.tick);
    for (const beat of slot) {
      beat.at += beat.every;
      this.place(beat);
    }
    // Placed again first: a beat that removes itself (its socket ended) removes its next place.
    const tick = this.tick;
    for (const beat of slot) {
      if (beat.removed) continue;
      if (!sliceSpent()) beat.fire(tick);
      else runWhenTurnHasTime(() => beat.removed || beat.fire(tick));
    }
  }
}
