import { MESSAGE_STATUSES } from '../../../domain/vocabulary.js';
import type { MessageStatus } from '../../../domain/types.js';
import type { StoredVote } from '../../ports/messages.js';

/** What few messages carry beyond their place and status (kept off the columns). */
export interface EntryExtra {
  editedText?: string;
  reactions?: Map<string, string>;
  /** A poll's votes by voter. */
  votes?: Map<string, StoredVote>;
  error?: string;
}

/** What a new row is made of. */
export interface NewEntry {
  id: string;
  chatId: string;
  fromMe: boolean;
  status: MessageStatus;
  timestamp: number;
  updatedAt: number;
  offset: number;
  length: number;
  /** The message has stored media (removed with it). */
  hasMedia: boolean;
}

/** One message of the index, as a plain object (made on demand: a page, a compaction, a test). */
export interface Entry extends NewEntry, EntryExtra {
  deleted: boolean;
}

const STATUS_BITS = 0b111;
const FROM_ME = 1 << 3;
const HAS_MEDIA = 1 << 4;
const DELETED = 1 << 5;
const STATUS_CODE = new Map<MessageStatus, number>(MESSAGE_STATUSES.map((s, i) => [s, i]));

/**
 * The in-memory index of one instance's kept messages, in columns: a row per message, its numbers
 * in typed arrays, its id and chat id in two plain arrays, its rare parts (an edit, reactions, poll
 * votes, an error) in a side map. A freed row is reused by the next message.
 *
 * Why not an object per message: a busy instance keeps up to 200 messages x 1,000 chats. As an
 * object each (11 fields, two of them heap numbers) in a Map, that was 216 bytes of heap a kept
 * message, 41 MiB for 200,000, every one an object the collector traces and, once evicted, garbage
 * in the old space; in columns it is 109 bytes (the id string and its Map entry are most of it):
 * `node --expose-gc --import=tsx bench/index-memory.ts`.
 */
export class EntryTable {
  /** Row of each message id. */
  private readonly rows = new Map<string, number>();
  private ids: Array<string | undefined> = [];
  private chatIds: Array<string | undefined> = [];
  private flags: Uint8Array = new Uint8Array(0);
  private timestamps: Float64Array = new Float64Array(0);
  private updated: Float64Array = new Float64Array(0);
  private offsets: Float64Array = new Float64Array(0);
  private lengths: Uint32Array = new Uint32Array(0);
  private readonly extras = new Map<number, EntryExtra>();
  private readonly free: number[] = [];
  /** Rows ever used (the next new one when none is free). */
  private used = 0;

  get size(): number {
    return this.rows.size;
  }

  has(id: string): boolean {
    return this.rows.has(id);
  }

  /** The row of a kept message, or -1. */
  row(id: string): number {
    return this.rows.get(id) ?? -1;
  }

  /** Every kept message id, in the order the messages came in. */
  keys(): IterableIterator<string> {
    return this.rows.keys();
  }

  /** Every kept row, in the order the messages came in. */
  allRows(): IterableIterator<number> {
    return this.rows.values();
  }

  add(e: NewEntry): number {
    const row = this.free.pop() ?? this.grow();
    this.rows.set(e.id, row);
    this.ids[row] = e.id;
    this.chatIds[row] = e.chatId;
    this.flags[row] = STATUS_CODE.get(e.status)! | (e.fromMe ? FROM_ME : 0) | (e.hasMedia ? HAS_MEDIA : 0);
    this.timestamps[row] = e.timestamp;
    this.updated[row] = e.updatedAt;
    this.offsets[row] = e.offset;
    this.lengths[row] = e.length;
    return row;
  }

  remove(row: number): void {
    const id = this.ids[row];
    if (id === undefined) return;
    this.rows.delete(id);
    this.ids[row] = undefined;
    this.chatIds[row] = undefined;
    this.extras.delete(row);
    this.free.push(row);
  }

  id(row: number): string {
    return this.ids[row]!;
  }

  chatId(row: number): string {
    return this.chatIds[row]!;
  }

  status(row: number): MessageStatus {
    return MESSAGE_STATUSES[this.flags[row]! & STATUS_BITS]!;
  }

  setStatus(row: number, status: MessageStatus): void {
    this.flags[row] = (this.flags[row]! & ~STATUS_BITS) | STATUS_CODE.get(status)!;
  }

  fromMe(row: number): boolean {
    return (this.flags[row]! & FROM_ME) !== 0;
  }

  hasMedia(row: number): boolean {
    return (this.flags[row]! & HAS_MEDIA) !== 0;
  }

  deleted(row: number): boolean {
    return (this.flags[row]! & DELETED) !== 0;
  }

  markDeleted(row: number): void {
    this.flags[row] = this.flags[row]! | DELETED;
  }

  timestamp(row: number): number {
    return this.timestamps[row]!;
  }

  updatedAt(row: number): number {
    return this.updated[row]!;
  }

  setUpdatedAt(row: number, at: number): void {
    this.updated[row] = at;
  }

  offset(row: number): number {
    return this.offsets[row]!;
  }

  length(row: number): number {
    return this.lengths[row]!;
  }

  /** Where the message's line is now (a compaction moved it). */
  place(row: number, offset: number, length: number): void {
    this.offsets[row] = offset;
    this.lengths[row] = length;
  }

  /** The row's rare parts, if it has any. */
  extra(row: number): EntryExtra | undefined {
    return this.extras.get(row);
  }

  /** The row's rare parts, made when it has none yet. */
  extraFor(row: number): EntryExtra {
    let x = this.extras.get(row);
    if (!x) {
      x = {};
      this.extras.set(row, x);
    }
    return x;
  }

  /** The row as a plain object. */
  entry(row: number): Entry {
    const x = this.extras.get(row);
    return {
      id: this.id(row),
      chatId: this.chatId(row),
      fromMe: this.fromMe(row),
      status: this.status(row),
      timestamp: this.timestamp(row),
      updatedAt: this.updatedAt(row),
      offset: this.offset(row),
      length: this.length(row),
      deleted: this.deleted(row),
      hasMedia: this.hasMedia(row),
      ...(x?.editedText !== undefined ? { editedText: x.editedText } : {}),
      ...(x?.reactions ? { reactions: x.reactions } : {}),
      ...(x?.votes ? { votes: x.votes } : {}),
      ...(x?.error !== undefined ? { error: x.error } : {}),
    };
  }

  /** A new row at the end, the columns doubled when full. */
  private grow(): number {
    const row = this.used++;
    if (row >= this.flags.length) {
      const cap = Math.max(64, this.flags.length * 2);
      this.flags = copied(this.flags, new Uint8Array(cap));
      this.timestamps = copied(this.timestamps, new Float64Array(cap));
      this.updated = copied(this.updated, new Float64Array(cap));
      this.offsets = copied(this.offsets, new Float64Array(cap));
      this.lengths = copied(this.lengths, new Uint32Array(cap));
    }
    return row;
  }
}

/** `to` (a larger column) with `from`'s values at its start. */
function copied<T extends { set(values: ArrayLike<number>): void }>(from: ArrayLike<number>, to: T): T {
  to.set(from);
  return to;
}
