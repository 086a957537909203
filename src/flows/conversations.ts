import type { Logger } from 'pino';
import { errorMessage } from '../domain/errors.js';
import { CoalescingWriter } from './coalescing-writer.js';
import type { FlowRepository } from '../storage/ports/flows.js';
import type { Conversation } from './types.js';

interface Book {
  /** Insertion order = least recently active first. */
  positions: Map<string, Conversation>;
  /** The stored positions would not read: they are left untouched and positions live in memory only. */
  broken: boolean;
  /** Chats set or forgotten since the last save started. */
  changed: Set<string>;
  writer: CoalescingWriter;
}

/**
 * Where each chat stands in its instance's flow (conversations.json), bounded per instance: past
 * `maxPerInstance` the least recently active chats are forgotten (they start over).
 */
export class ConversationBook {
  private readonly loaded = new Map<string, Promise<Book>>();

  constructor(
    private readonly files: FlowRepository,
    private readonly log: Logger,
    private readonly maxPerInstance: number,
  ) {}

  private book(id: string): Promise<Book> {
    let b = this.loaded.get(id);
    if (!b) {
      b = this.load(id);
      this.loaded.set(id, b);
    }
    return b;
  }

  private async load(id: string): Promise<Book> {
    const book: Book = { positions: new Map(), broken: false, changed: new Set(), writer: new CoalescingWriter(() => this.write(id, book)) };
    try {
      const stored = await this.files.readConversations(id);
      const sorted = [...stored].sort((a, b) => a[1].updatedAt.localeCompare(b[1].updatedAt));
      for (const [chatId, c] of sorted) book.positions.set(chatId, c);
    } catch (err) {
      book.broken = true;
      this.log.error({ instanceId: id, err: errorMessage(err) }, 'conversation positions unreadable; file left untouched, positions kept in memory only');
    }
    return book;
  }

  private async write(id: string, book: Book): Promise<void> {
    if (book.broken || !this.loaded.has(id)) return;
    const changed = book.changed;
    book.changed = new Set();
    try {
      await this.files.saveConversations(id, book.positions, changed);
    } catch (err) {
      for (const c of changed) book.changed.add(c);
      throw err;
    }
  }

  async get(id: string, chatId: string): Promise<Conversation | undefined> {
    return (await this.book(id)).positions.get(chatId);
  }

  /** Remembers (or, with null, forgets) where a chat stands, and stores it. */
  async set(id: string, chatId: string, conversation: Conversation | null): Promise<void> {
    const book = await this.book(id);
    const had = book.positions.get(chatId);
    if (conversation === null) {
      if (!book.positions.delete(chatId)) return;
    } else {
      if (had && had.node === conversation.node && had.revision === conversation.revision) return;
      book.positions.delete(chatId);
      book.positions.set(chatId, conversation);
      while (book.positions.size > this.maxPerInstance) {
        const oldest = book.positions.keys().next().value as string;
        book.positions.delete(oldest);
        book.changed.add(oldest);
      }
    }
    book.changed.add(chatId);
    await book.writer.request().catch((err: unknown) => this.log.error({ instanceId: id, chatId, err: errorMessage(err) }, 'could not store the conversation position'));
  }

  async flush(): Promise<void> {
    for (const b of this.loaded.values()) await (await b.catch(() => null))?.writer.flush();
  }

  forget(id: string): void {
    this.loaded.delete(id);
  }
}
