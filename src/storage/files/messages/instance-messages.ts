import { readFile } from 'node:fs/promises';
import { Journal } from '../journal.js';
import type { WriteGuard } from '../../../fs/write-guard.js';
import type { StatusChange } from '../../ports/messages.js';
import { isForward, parseRecord, type JournalRecord, type StoredMessage } from './records.js';
import { EntryTable } from './entry-table.js';
import { MESSAGE_STATUSES } from '../../../domain/vocabulary.js';

export interface Chat {
  chatId: string;
  name?: string;
  isGroup: boolean;
  lastMessageAt: number;
  unread: number;
  /** Message ids, oldest first. */
  ids: string[];
}

export interface Limits {
  maxPerChat: number;
  keepMs: number;
}

export type { StatusChange };

/**
 * How long a lazy history line (a send's `pending` and `sent`) waits for others before it is
 * written. Debited sends get their batching from the credit journal's fdatasync (the lines of every
 * send waiting on it pile up meanwhile); premium sends have nothing to wait for, and wrote once per
 * turn of the event loop. 5 ms: a few hundred writes a second at most per busy instance.
 */
export const LAZY_DELAY_MS = 5;

/**
 * One instance's messages: the journal on disk, and in memory an index of every kept message (where
 * its line is, its status and later changes) and of its chats. Message bodies stay on disk and are
 * read when a page of history is asked for.
 */
export class InstanceMessages {
  /** Every kept message: where its line is, its status and later changes (see EntryTable). */
  readonly entries = new EntryTable();
  readonly chats = new Map<string, Chat>();
  /** Bytes of the journal that still describe kept messages. */
  private liveBytes = 0;
  private compacting: Promise<void> | null = null;

  private constructor(
    private readonly journal: Journal,
    private readonly limits: Limits,
    private readonly onEvict: (id: string, hasMedia: boolean) => void,
  ) {}

  static async open(file: string, limits: Limits, onEvict: (id: string, hasMedia: boolean) => void, now: number, guard: WriteGuard): Promise<InstanceMessages> {
    // A debited send's lines are lazy (it answers once its debit is on disk): coalesced over a few
    // ms. A premium send waits for its `sent` line, a received message is durable: while most writes
    // are waited for, they go out with O_DSYNC (one trip to the disk, not two; see Journal.open).
    const { journal, lines } = await Journal.open(file, { guard, lazyDelayMs: LAZY_DELAY_MS, adaptive: true });
    const im = new InstanceMessages(journal, limits, onEvict);
    for (const line of lines) {
      const r = parseRecord(line.text);
      if (r) im.apply(r, line.offset, Buffer.byteLength(line.text, 'utf8'));
    }
    im.prune(now);
    return im;
  }

  /** Applies one record to the index (replay and live). */
  private apply(r: JournalRecord, offset: number, length: number): StatusChange | null {
    switch (r.k) {
      case 'm': {
        if (this.entries.has(r.messageId)) return null;
        // A line whose status is not one of ours (damaged by hand or disk) is not a message we know.
        if (!(MESSAGE_STATUSES as readonly string[]).includes(r.status)) return null; // a duplicate (offline backlog repeats live messages)
        let chat = this.chats.get(r.chatId);
        if (!chat) {
          chat = { chatId: r.chatId, isGroup: r.chatId.endsWith('@g.us'), lastMessageAt: 0, unread: 0, ids: [] };
          this.chats.set(r.chatId, chat);
        }
        // The chat's own copy of its id: each send brings a string of its own, and the index keeps
        // up to 200 messages per chat (1,000 chats: 200,000 entries, ~48 bytes each saved).
        const row = this.entries.add({ id: r.messageId, chatId: chat.chatId, fromMe: r.fromMe, status: r.status, timestamp: r.timestamp, updatedAt: r.updatedAt, offset, length, hasMedia: r.media !== undefined });
        if (r.error !== undefined) this.entries.extraFor(row).error = r.error;
        if (r.deleted) this.entries.markDeleted(row);
        if (r.reactions) this.entries.extraFor(row).reactions = new Map(Object.entries(r.reactions));
        if (r.votes) this.entries.extraFor(row).votes = new Map(Object.entries(r.votes));
        this.liveBytes += length + 1;
        chat.ids.push(r.messageId);
        chat.lastMessageAt = Math.max(chat.lastMessageAt, r.timestamp);
        if (!r.fromMe && r.status !== 'read') chat.unread += 1;
        if (!r.fromMe && r.fromName && !chat.isGroup) chat.name = r.fromName;
        while (chat.ids.length > this.limits.maxPerChat) this.evict(chat.ids[0]!);
        return null;
      }
      case 's': {
        const row = this.entries.row(r.id);
        if (row < 0) return null;
        const from = this.entries.status(row);
        if (!isForward(from, r.status)) return null;
        const change: StatusChange = { messageId: r.id, chatId: this.entries.chatId(row), from, to: r.status };
        this.entries.setStatus(row, r.status);
        this.entries.setUpdatedAt(row, r.at);
        if (r.error !== undefined) this.entries.extraFor(row).error = r.error;
        this.liveBytes += length + 1;
        return change;
      }
      case 'e': {
        const row = this.entries.row(r.id);
        if (row < 0) return null;
        this.entries.extraFor(row).editedText = r.text;
        this.entries.setUpdatedAt(row, r.at);
        this.liveBytes += length + 1;
        return null;
      }
      case 'd': {
        const row = this.entries.row(r.id);
        if (row < 0) return null;
        this.entries.markDeleted(row);
        this.entries.setUpdatedAt(row, r.at);
        this.liveBytes += length + 1;
        return null;
      }
      case 'r': {
        const row = this.entries.row(r.id);
        if (row < 0) return null;
        const x = this.entries.extraFor(row);
        x.reactions ??= new Map();
        if (r.emoji === '') x.reactions.delete(r.sender);
        else x.reactions.set(r.sender, r.emoji);
        this.entries.setUpdatedAt(row, r.at);
        this.liveBytes += length + 1;
        return null;
      }
      case 'v': {
        const row = this.entries.row(r.id);
        if (row < 0) return null;
        const x = this.entries.extraFor(row);
        x.votes ??= new Map();
        x.votes.set(r.voter, { ...(r.phone !== undefined ? { phone: r.phone } : {}), selected: r.selected, at: r.at });
        this.entries.setUpdatedAt(row, r.at);
        this.liveBytes += length + 1;
        return null;
      }
      case 'clear': {
        const chat = this.chats.get(r.chat);
        if (!chat) return null;
        for (const id of [...chat.ids]) this.evict(id);
        return null;
      }
      case 'read': {
        const chat = this.chats.get(r.chat);
        if (!chat) return null;
        chat.unread = 0;
        for (const id of chat.ids) {
          const row = this.entries.row(id);
          if (row >= 0 && !this.entries.fromMe(row) && this.entries.status(row) === 'delivered') this.entries.setStatus(row, 'read');
        }
        return null;
      }
    }
  }

  private evict(id: string): void {
    const table = this.entries;
    const row = table.row(id);
    if (row < 0) return;
    const chatId = table.chatId(row);
    const fromMe = table.fromMe(row);
    const status = table.status(row);
    const hasMedia = table.hasMedia(row);
    this.liveBytes -= table.length(row) + 1;
    table.remove(row);
    const chat = this.chats.get(chatId);
    if (chat) {
      // The oldest goes first (a full chat evicts one per new message): shift() trims the array in
      // place where splice() copies it (measured with 200 ids: 1.8 -> 0.1 µs; with 2,000: 12-28 -> 0.1 µs).
      if (chat.ids[0] === id) chat.ids.shift();
      else {
        const i = chat.ids.indexOf(id);
        if (i >= 0) chat.ids.splice(i, 1);
      }
      if (!fromMe && status === 'delivered' && chat.unread > 0) chat.unread -= 1;
      if (chat.ids.length === 0) this.chats.delete(chat.chatId);
    }
    this.onEvict(id, hasMedia);
  }

  /** Drops messages older than the retention; returns how many went. */
  prune(now: number): number {
    const cutoff = now - this.limits.keepMs;
    let n = 0;
    const table = this.entries;
    const old: string[] = [];
    for (const row of table.allRows()) if (table.timestamp(row) < cutoff) old.push(table.id(row));
    for (const id of old) {
      this.evict(id);
      n += 1;
    }
    return n;
  }

  /**
   * Appends a record: durable (resolves once on disk) or lazy. Applied to the index at once, so a
   * reader sees it; the returned change says whether a status moved forward (null when it did not,
   * in which case nothing was written).
   */
  async write(record: JournalRecord, durable: boolean): Promise<StatusChange | null> {
    // Lines appended during a compaction would be missed by it: wait for it to finish.
    while (this.compacting) await this.compacting.catch(() => undefined);
    if (record.k === 's') {
      const row = this.entries.row(record.id);
      if (row < 0 || !isForward(this.entries.status(row), record.status)) return null;
    }
    if ((record.k === 'e' || record.k === 'd' || record.k === 'r' || record.k === 'v') && !this.entries.has(record.id)) return null;
    if (record.k === 'm' && this.entries.has(record.messageId)) return null;
    if (record.k === 'clear' && !this.chats.has(record.chat)) return null;
    const text = JSON.stringify(record);
    let offset: number;
    let done: Promise<void> | null = null;
    if (durable) {
      const appended = this.journal.append(text);
      offset = appended.offset;
      done = appended.durable;
    } else {
      offset = this.journal.appendLazy(text);
    }
    // The journal counted the line's bytes (and its newline) as it queued it.
    const length = this.journal.size - offset - 1;
    const change = this.apply(record, offset, length);
    if (done) await done;
    this.maybeCompact();
    return change;
  }

  /** Writes made to the journal so far (each a batch of lines); for tests. */
  get journalWrites(): number {
    return this.journal.writes;
  }


  /** The stored line of a message, parsed, with its later changes merged in. */
  async message(id: string): Promise<StoredMessage | null> {
    const at = this.entries.row(id);
    if (at < 0) return null;
    const before = this.entries.entry(at);
    const r = parseRecord(await this.journal.read(before.offset, before.length));
    if (r?.k !== 'm' || r.messageId !== id) return null;
    // What changed while the line was read (a status, an edit, a delete) is shown; a message
    // evicted meanwhile shows as it was (its row may already hold another message).
    const now = this.entries.row(id);
    const e = now < 0 ? before : this.entries.entry(now);
    const { k: _k, ...stored } = r;
    const out: StoredMessage = { ...stored, status: e.status, updatedAt: e.updatedAt };
    if (e.editedText !== undefined) {
      if (out.caption !== undefined && out.text === undefined) out.caption = e.editedText;
      else out.text = e.editedText;
      out.edited = true;
    }
    if (e.deleted) {
      out.deleted = true;
      delete out.text;
      delete out.caption;
    }
    if (e.reactions && e.reactions.size > 0) out.reactions = Object.fromEntries(e.reactions);
    else delete out.reactions;
    if (e.votes && e.votes.size > 0) out.votes = Object.fromEntries(e.votes);
    else delete out.votes;
    if (e.error !== undefined) out.error = e.error;
    return out;
  }

  /** Rewrites the journal when most of it no longer describes kept messages. */
  private maybeCompact(): void {
    if (this.compacting || this.journal.size < 1_048_576 || this.journal.size < 2 * this.liveBytes) return;
    this.compact().catch(() => undefined);
  }

  /**
   * One merged `m` line per kept message, in journal order. Writes wait until it is done (lines
   * appended meanwhile would be missed by it), whoever asked for it.
   */
  async compact(): Promise<void> {
    while (this.compacting) await this.compacting.catch(() => undefined);
    const done = this.rewriteJournal().finally(() => {
      this.compacting = null;
    });
    this.compacting = done;
    return done;
  }

  private async rewriteJournal(): Promise<void> {
    await this.journal.drain();
    const data = await readFile(this.journal.file);
    const table = this.entries;
    const kept = [...table.allRows()].map((row) => table.entry(row)).sort((a, b) => a.offset - b.offset);
    const lines: string[] = [];
    const written: string[] = [];
    for (const e of kept) {
      const r = parseRecord(data.subarray(e.offset, e.offset + e.length).toString('utf8'));
      if (r?.k !== 'm' || r.messageId !== e.id) continue;
      written.push(e.id);
      const merged = { ...r, status: e.status, updatedAt: e.updatedAt } as JournalRecord & StoredMessage;
      if (e.editedText !== undefined) {
        if (merged.text === undefined && merged.caption !== undefined) merged.caption = e.editedText;
        else merged.text = e.editedText;
        merged.edited = true;
      }
      if (e.deleted) merged.deleted = true;
      if (e.reactions && e.reactions.size > 0) merged.reactions = Object.fromEntries(e.reactions);
      if (e.votes && e.votes.size > 0) merged.votes = Object.fromEntries(e.votes);
      if (e.error !== undefined) merged.error = e.error;
      lines.push(JSON.stringify(merged));
    }
    const offsets = await this.journal.rewrite(lines);
    let live = 0;
    // Ids, not rows: a row freed meanwhile (the retention sweep) is skipped, never written over.
    written.forEach((id, i) => {
      const row = table.row(id);
      if (row < 0) return;
      const length = Buffer.byteLength(lines[i]!, 'utf8');
      table.place(row, offsets[i]!, length);
      const x = table.extra(row);
      if (x) delete x.editedText;
      live += length + 1;
    });
    this.liveBytes = live;
  }

  async close(): Promise<void> {
    await this.compacting;
    await this.journal.close();
  }
}
