import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { MAX_TIMER_MS, type TimerHandle, type Timers } from '../domain/timers.js';
import { errorMessage } from '../domain/errors.js';
import type { FlowRepository } from '../storage/ports/flows.js';
import { isOpen } from './handover-view.js';
import type { Handover } from './types.js';


/**
 * Open handovers per instance (handovers.json): a handed-over chat is muted for the bot until an
 * operator releases it or it times out. One timer wakes at the earliest expiry and removes what
 * expired.
 */
export class HandoverBook {
  private readonly loaded = new Map<string, Promise<Map<string, Handover>>>();
  private timer: TimerHandle | null = null;
  private stopped = false;

  constructor(
    private readonly files: FlowRepository,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: Logger,
  ) {}

  private book(id: string): Promise<Map<string, Handover>> {
    let b = this.loaded.get(id);
    if (!b) {
      b = this.files.readHandovers(id).then(
        (map) => map,
        (err: unknown) => {
          this.loaded.delete(id);
          throw err;
        },
      );
      this.loaded.set(id, b);
      void b.then(() => this.arm(), () => undefined);
    }
    return b;
  }

  private async save(id: string, book: Map<string, Handover>, changed: Iterable<string>): Promise<void> {
    await this.files.saveHandovers(id, book, changed);
  }

  /** Loads the handovers of these instances so their expiries are watched (at start). */
  async preload(ids: Iterable<string>): Promise<void> {
    for (const id of ids) await this.book(id).catch((err: unknown) => this.log.error({ instanceId: id, err: errorMessage(err) }, 'could not read handovers'));
  }

  /** The open handover of a chat, if any. */
  async openFor(id: string, chatId: string): Promise<Handover | undefined> {
    const h = (await this.book(id)).get(chatId);
    return h && isOpen(h, this.clock.now()) ? h : undefined;
  }

  async open(id: string, handover: Handover): Promise<void> {
    const book = await this.book(id);
    const next = new Map(book);
    next.set(handover.chatId, handover);
    await this.save(id, next, [handover.chatId]);
    book.set(handover.chatId, handover);
    this.arm();
  }

  /**
   * A person claims a chat in the inbox (`by`), or lets go of it (`by` null): a claim opens a
   * handover when none is open (the bot stays quiet meanwhile) and keeps it open at least until
   * `until`; letting go keeps the handover (a release gives the chat back to the bot). Returns the
   * handover as it is now, or null when letting go of a chat without one.
   */
  async claim(id: string, chatId: string, by: string | null, opened: () => Handover, until: string): Promise<Handover | null> {
    const book = await this.book(id);
    const now = this.clock.now();
    const current = book.get(chatId);
    const open = current && isOpen(current, now) ? current : undefined;
    if (!open && by === null) return null;
    const base = open ?? opened();
    const next: Handover = { ...base };
    if (by === null) delete next.claimedBy;
    else {
      next.claimedBy = by;
      if (next.expiresAt < until) next.expiresAt = until;
    }
    const all = new Map(book);
    all.set(chatId, next);
    await this.save(id, all, [chatId]);
    book.set(chatId, next);
    this.arm();
    return next;
  }

  /** Open handovers, oldest first. */
  async list(id: string): Promise<Handover[]> {
    const now = this.clock.now();
    return [...(await this.book(id)).values()].filter((h) => isOpen(h, now)).sort((a, b) => a.openedAt.localeCompare(b.openedAt));
  }

  /** Releases the handovers of `phone` (or of `chatId`); returns the open ones released. */
  async release(id: string, match: { phone?: string; chatId?: string }): Promise<Handover[]> {
    const book = await this.book(id);
    const now = this.clock.now();
    const gone = [...book.values()].filter((h) => (match.phone !== undefined && h.phone === match.phone) || (match.chatId !== undefined && h.chatId === match.chatId));
    if (gone.length === 0) return [];
    const next = new Map(book);
    for (const h of gone) next.delete(h.chatId);
    await this.save(id, next, gone.map((h) => h.chatId));
    for (const h of gone) book.delete(h.chatId);
    const released = gone.filter((h) => isOpen(h, now));
    for (const h of released) this.log.info({ instanceId: id, chatId: h.chatId }, 'handover released; the bot answers this chat again');
    return released;
  }

  forget(id: string): void {
    this.loaded.delete(id);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }

  /** One timer for the earliest expiry among loaded handovers. */
  private arm(): void {
    if (this.stopped) return;
    void this.earliest().then((at) => {
      this.timer?.cancel();
      this.timer = null;
      if (at === null || this.stopped) return;
      this.timer = this.timers.after(Math.min(MAX_TIMER_MS, Math.max(0, at - this.clock.now()) + 5), () => void this.expire());
    });
  }

  private async earliest(): Promise<number | null> {
    let at = Number.POSITIVE_INFINITY;
    for (const b of this.loaded.values()) {
      const book = await b.catch(() => null);
      for (const h of book?.values() ?? []) at = Math.min(at, Date.parse(h.expiresAt));
    }
    return Number.isFinite(at) ? at : null;
  }

  /** Removes what timed out, instance by instance. */
  async expire(): Promise<void> {
    const now = this.clock.now();
    for (const [id, b] of this.loaded) {
      const book = await b.catch(() => null);
      if (!book) continue;
      const expired = [...book.values()].filter((h) => !isOpen(h, now));
      if (expired.length === 0) continue;
      const next = new Map(book);
      for (const h of expired) next.delete(h.chatId);
      try {
        await this.save(id, next, expired.map((h) => h.chatId));
        for (const h of expired) {
          book.delete(h.chatId);
          this.log.info({ instanceId: id, chatId: h.chatId, openedAt: h.openedAt }, 'handover timed out; the bot answers this chat again');
        }
      } catch (err) {
        this.log.error({ instanceId: id, err: errorMessage(err) }, 'could not remove expired handovers');
      }
    }
    this.arm();
  }
}
