import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config/schema.js';
import { DAY_MS, type Clock } from '../../domain/clock.js';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import type { TimerHandle, Timers } from '../../domain/timers.js';
import type { MessageStatus } from '../../domain/types.js';
import type { InboundMessage } from '../../schemas/events.js';
import type { MediaRepository } from '../ports/media.js';
import { SEARCH_SCAN, messageMatches, type ChatPage, type ChatSummary, type InboundExtra, type MessageRepository, type StatusChange, type StoredMessage, type StoredVote } from '../ports/messages.js';
import type { Db } from './db.js';
import { GroupWrites, type Waiting } from './group-writes.js';
import type { LeaseEpochs } from './lease-epochs.js';
import { isForward } from '../../domain/message-status.js';

export interface PgMessagesOptions {
  db: Db;
  history: GatewayConfig['history'];
  media: MediaRepository;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** The lease epoch each write carries (migration 011). */
  epochs: LeaseEpochs;
}

interface MessageRow {
  body: string;
  status: MessageStatus;
  updated_at: number;
  edited_text: string | null;
  deleted: boolean;
  reactions: Record<string, string> | null;
  votes: Record<string, StoredVote> | null;
  error: string | null;
}

const COLUMNS = 'body, status, updated_at, edited_text, deleted, reactions, votes, error';

const ORDER = "ARRAY['pending', 'sent', 'delivered', 'read', 'played']";

/** Whether status `to` may follow `old.status` (never backwards; `failed` only before delivery), as SQL. */
function forward(to: string): string {
  return `(old.status <> 'failed' AND CASE WHEN ${to} = 'failed' THEN old.status IN ('pending', 'sent')
  ELSE array_position(${ORDER}, ${to}::text) > array_position(${ORDER}, old.status) END)`;
}

/** A message row to insert, as the batch statement's arrays take it. */
interface NewRow {
  /** Replaced (not changed in place) when a status merges into it. */
  kept: StoredMessage;
  durable: boolean;
  /** The lease epoch when it was recorded. */
  epoch: number | null;
}

/** Writes of one lease epoch go in one batch (migration 011 refuses a whole statement for a stale one). */
const sameEpoch = (a: { epoch: number | null }, b: { epoch: number | null }): boolean => a.epoch === b.epoch;

/** A status to set, as the batch statement's arrays take it. */
interface NewStatus {
  durable: boolean;
  epoch: number | null;
  messageId: string;
  status: MessageStatus;
  error: string | null;
}

/**
 * A value of one write that PostgreSQL refuses (SQLSTATE class 22, data exception: a NUL in text,
 * say; or 23, a constraint): a batch of new messages is tried again one write at a time, so only
 * the bad one fails. An outage, a stale lease, a timeout or a bug fails the batch as it is.
 */
function refusedData(err: unknown): boolean {
  const code = err instanceof GatewayError ? undefined : (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/** Items whose `id` appears once, and the rest (a statement touches each row at most once). */
function firstOfEach<T>(items: readonly T[], id: (item: T) => string): { first: Array<[number, T]>; rest: Array<[number, T]> } {
  const seen = new Set<string>();
  const first: Array<[number, T]> = [];
  const rest: Array<[number, T]> = [];
  items.forEach((item, i) => {
    const k = id(item);
    if (seen.has(k)) rest.push([i, item]);
    else {
      seen.add(k);
      first.push([i, item]);
    }
  });
  return { first, rest };
}

/** A stored row with what happened to it since merged in, as the files engine answers it. */
function merged(row: MessageRow): StoredMessage {
  const out = { ...(JSON.parse(row.body) as StoredMessage), status: row.status, updatedAt: row.updated_at };
  if (row.edited_text !== null) {
    if (out.caption !== undefined && out.text === undefined) out.caption = row.edited_text;
    else out.text = row.edited_text;
    out.edited = true;
  }
  if (row.deleted) {
    out.deleted = true;
    delete out.text;
    delete out.caption;
  }
  if (row.reactions && Object.keys(row.reactions).length > 0) out.reactions = row.reactions;
  else delete out.reactions;
  if (row.votes && Object.keys(row.votes).length > 0) out.votes = row.votes;
  else delete out.votes;
  if (row.error !== null) out.error = row.error;
  return out;
}

/** How long a message's `pending` row waits for its status before it is written without it. */
export const DEFER_PENDING_MS = 3;

/** Chats per instance whose row count is kept in memory (see PgMessages.chatRows): ~100 bytes each. */
const MAX_COUNTED_CHATS = 2_000;

/**
 * Messages in PostgreSQL, one row each. A new message and the eviction of the oldest of its chat
 * past `history.maxMessagesPerChat` (with their media) are one statement; what expired past
 * `history.days` goes when an instance is first used by this process, and in the periodic sweep.
 * Writes the port allows to be lost in a crash go through the lazy pool (no wait for the WAL
 * flush).
 *
 * New messages and statuses of an instance that arrive together are one statement each
 * (group-writes.ts). An outgoing message's `pending` record, which may be lost in a crash, waits up
 * to DEFER_PENDING_MS in this process for its `sent` (or `failed`): the status is merged into the row
 * before it is written, one row write instead of two. Every read and every other change of that
 * instance first waits for the rows still waiting, so what was recorded is what is found; and the
 * status that merged resolves once its row is stored (a send's 200 comes after it, so another node
 * finds the message too).
 */
export class PgMessages implements MessageRepository {
  private readonly pruned = new Map<string, Promise<void>>();
  /**
   * Per instance, per chat: how many rows it holds, as this process's batches left it (one batch of
   * an instance at a time, and only the lease holder writes an instance's messages). Anything
   * else that removes rows forgets the count (the age prune, a removed chat or instance), and so
   * does taking an instance over (`adopted`): another node may have written it meanwhile.
   */
  private readonly chatRows = new Map<string, Map<string, number>>();
  private sweepTimer: TimerHandle | null = null;
  /**
   * New messages and statuses, batched per instance (group-writes.ts), in the order they came: a
   * batch is durable when one of its writes must be (the others are flushed with it).
   */
  private readonly inserts = new GroupWrites<NewRow, boolean>((id, rows) => this.insertBatch(id, rows), refusedData, 500, sameEpoch);
  // Not retried one by one: a status batch may be two statements (a message twice in it), and the
  // first may have committed when the second fails.
  private readonly statuses = new GroupWrites<NewStatus, StatusChange | null>((id, items) => this.statusBatch(id, items), () => false, 500, sameEpoch);

  constructor(private readonly options: PgMessagesOptions) {}

  get historyEnabled(): boolean {
    return this.options.history.enabled;
  }

  private get db(): Db {
    return this.options.db;
  }

  private epoch(instanceId: string): number | null {
    return this.options.epochs.of(instanceId);
  }

  /**
   * Before a read or a change: what expired is dropped (once), and the instance's new messages
   * still waiting to be written are stored.
   */
  private async ready(instanceId: string): Promise<void> {
    await this.prunedOnce(instanceId);
    if (this.inserts.pending(instanceId)) await this.inserts.drained(instanceId);
  }

  /** Drops what expired, once per instance and process before its first use (then by the sweep). */
  private prunedOnce(instanceId: string): Promise<void> {
    let p = this.pruned.get(instanceId);
    if (!p) {
      p = this.prune(instanceId, this.options.clock.now());
      p.catch(() => this.pruned.delete(instanceId));
      this.pruned.set(instanceId, p);
    }
    return p;
  }

  private async prune(instanceId: string, now: number): Promise<void> {
    // Before and after: a batch written meanwhile counted rows this may remove.
    this.chatRows.delete(instanceId);
    try {
      await this.db.query(
        'message store',
        `WITH gone AS (DELETE FROM messages WHERE instance_id = $1 AND ts < $2 RETURNING message_id, has_media)
        DELETE FROM media d USING gone WHERE gone.has_media AND d.instance_id = $1 AND d.message_id = gone.message_id`,
        [instanceId, now - this.options.history.days * DAY_MS],
      );
    } finally {
      this.chatRows.delete(instanceId);
    }
  }

  /** Without history, only what the lifecycle needs is kept. */
  private trim(m: StoredMessage): StoredMessage {
    if (this.options.history.enabled) return m;
    const { messageId, chatId, fromMe, sender, from, type, status, timestamp, updatedAt } = m;
    return { messageId, chatId, fromMe, sender, from, type, status, timestamp, updatedAt };
  }

  /** Stores a message (a duplicate id is ignored) and evicts the oldest of its chat past the bound. */
  private async insert(instanceId: string, m: StoredMessage, durable: boolean, epoch: number | null): Promise<void> {
    await this.prunedOnce(instanceId);
    // Whether the row went in (not a duplicate id, not past the bound of its batch) is not asked.
    await this.inserts.add(instanceId, { kept: this.trim(m), durable, epoch });
  }

  /**
   * One statement for a batch of one instance's new messages: the rows, then, per chat they went
   * to, the eviction of its oldest past `history.maxMessagesPerChat` (with their media).
   *
   * Eviction needs each chat's row count before the batch (chatCounts), and visits only the rows
   * past the bound, oldest first; reading the chat's newest `max` rows to find where the bound falls
   * (as before) was most of PostgreSQL's CPU for a busy chat (perf, pg-diag inbound: a batch read
   * 200 index entries and their heap tuples per chat it touched). When every chat of the batch stays
   * within the bound, the statement is a plain insert: the full one took 0.73 ms of planning (bind)
   * a batch against 1.26 ms of execution (log_min_duration_statement, pg-diag).
   */
  private async insertBatch(instanceId: string, rows: NewRow[]): Promise<boolean[]> {
    const max = Math.max(1, Math.floor(this.options.history.maxMessagesPerChat));
    const adding = new Map<string, number>();
    for (const r of rows) adding.set(r.kept.chatId, (adding.get(r.kept.chatId) ?? 0) + 1);
    const had = await this.chatCounts(instanceId, [...adding.keys()]);
    const within = [...adding].every(([chat, k]) => had.get(chat)! + k <= max);
    // The rows go as one JSON array (json_to_recordset), not as thirteen arrays: pg writes an array
    // parameter element by element in JavaScript, escaping each (the JSON bodies are full of quotes),
    // where JSON.stringify is native. 1,500 batches of 20 messages, one connection: the client's CPU
    // 457 to 548 -> 346 to 388 ms, the server's time the same.
    // Text as the arrays stored it: a lone surrogate becomes U+FFFD (Buffer's UTF-8 did that; in JSON
    // PostgreSQL would refuse it), and a NUL, refused by PostgreSQL's text either way, fails its row.
    // (String.prototype.toWellFormed: Node 20 has it, TypeScript's ES2022 library does not.)
    const text = (v: string): string => (v as string & { toWellFormed(): string }).toWellFormed();
    const values = [
      instanceId,
      JSON.stringify(
        rows.map(({ kept: m, epoch }) => ({
          message_id: text(m.messageId),
          chat_id: text(m.chatId),
          from_me: m.fromMe,
          // PostgreSQL's text refuses NUL; the body (JSON) keeps the name as it came.
          from_name: !m.fromMe && m.fromName !== undefined ? text(m.fromName.replaceAll('\u0000', '')) : null,
          status: m.status,
          ts: m.timestamp,
          updated_at: m.updatedAt,
          body: JSON.stringify(m),
          deleted: m.deleted === true,
          reactions: m.reactions ?? null,
          error: m.error === undefined ? null : text(m.error.replaceAll('\u0000', '')),
          has_media: m.media !== undefined,
          lease_epoch: epoch,
        })),
      ),
    ];
    const lazy = !rows.some((r) => r.durable);
    const kept = new Set<string>();
    try {
      if (within) {
        const { rows: stored } = await this.db.query<{ message_id: string; chat_id: string }>(
          'message store',
          `INSERT INTO messages (instance_id, message_id, chat_id, from_me, from_name, status, ts, updated_at, body, deleted, reactions, error, has_media, lease_epoch)
          SELECT $1, message_id, chat_id, from_me, from_name, status, ts, updated_at, body, deleted, reactions, error, has_media, lease_epoch
          FROM ROWS FROM (json_to_recordset($2::json) AS (message_id text, chat_id text, from_me boolean, from_name text, status text, ts bigint, updated_at bigint, body text, deleted boolean, reactions jsonb, error text, has_media boolean, lease_epoch bigint))
            WITH ORDINALITY AS v(message_id, chat_id, from_me, from_name, status, ts, updated_at, body, deleted, reactions, error, has_media, lease_epoch, ord)
          ORDER BY ord
          ON CONFLICT DO NOTHING RETURNING message_id, chat_id`,
          values,
          lazy,
        );
        for (const r of stored) {
          kept.add(r.message_id);
          had.set(r.chat_id, had.get(r.chat_id)! + 1);
        }
        for (const [chat, n] of had) this.countRows(instanceId, chat, n);
        return rows.map((r) => kept.has(r.kept.messageId));
      }
      // The statement is prepared (db.ts), and its plan must be right whatever the tables held when
      // it was made: rows are deleted by their primary key (a join on instance_id alone was planned,
      // on a new database, as a scan of the whole instance: 7 ms a send instead of 0.2), and the
      // bound is part of the text so the planner knows it. The new rows are not among those the
      // statement's eviction sees: per chat, it keeps the bound less the rows that chat received
      // (and of a batch with more than the bound for one chat, only its newest are stored).
      const { rows: answer } = await this.db.query<{ k: string; id: string; n: number }>(
        'message store',
        `WITH v AS (SELECT * FROM ROWS FROM (json_to_recordset($2::json) AS (message_id text, chat_id text, from_me boolean, from_name text, status text, ts bigint, updated_at bigint, body text, deleted boolean, reactions jsonb, error text, has_media boolean, lease_epoch bigint))
            WITH ORDINALITY AS v(message_id, chat_id, from_me, from_name, status, ts, updated_at, body, deleted, reactions, error, has_media, lease_epoch, ord)),
        r AS (SELECT v.*, row_number() OVER (PARTITION BY chat_id ORDER BY ord DESC) AS newer FROM v),
        ins AS (
          INSERT INTO messages (instance_id, message_id, chat_id, from_me, from_name, status, ts, updated_at, body, deleted, reactions, error, has_media, lease_epoch)
          SELECT $1, message_id, chat_id, from_me, from_name, status, ts, updated_at, body, deleted, reactions, error, has_media, lease_epoch FROM r WHERE newer <= ${max} ORDER BY ord
          ON CONFLICT DO NOTHING RETURNING message_id, chat_id),
        per AS (SELECT chat_id, count(*)::integer AS added FROM ins GROUP BY chat_id),
        had AS (SELECT per.chat_id, per.added, k.n FROM per JOIN unnest($3::text[], $4::integer[]) AS k(chat_id, n) ON k.chat_id = per.chat_id),
        gone AS (DELETE FROM messages m WHERE m.instance_id = $1 AND m.message_id = ANY (ARRAY(
          SELECT old.message_id FROM had CROSS JOIN LATERAL (
            SELECT message_id FROM messages WHERE instance_id = $1 AND chat_id = had.chat_id ORDER BY seq LIMIT GREATEST(0, had.n + had.added - ${max})) old))
          RETURNING m.message_id, m.chat_id, m.has_media),
        media_gone AS (DELETE FROM media d WHERE d.instance_id = $1 AND d.message_id = ANY (ARRAY(SELECT message_id FROM gone WHERE has_media
          UNION ALL SELECT r.message_id FROM r WHERE r.newer > ${max} AND r.has_media
            AND NOT EXISTS (SELECT 1 FROM messages x WHERE x.instance_id = $1 AND x.message_id = r.message_id))))
        SELECT 'm' AS k, message_id AS id, 0 AS n FROM ins
        UNION ALL SELECT 'c', had.chat_id, had.n + had.added - (SELECT count(*)::integer FROM gone WHERE gone.chat_id = had.chat_id) FROM had`,
        [...values, [...had.keys()], [...had.values()]],
        lazy,
      );
      for (const a of answer) {
        if (a.k === 'm') kept.add(a.id);
        else this.countRows(instanceId, a.id, a.n);
      }
      return rows.map((r) => kept.has(r.kept.messageId));
    } catch (err) {
      // It may have been stored all the same (an answer lost on the way): count again.
      this.chatRows.delete(instanceId);
      throw err;
    }
  }

  /**
   * The rows each of `chats` holds now: as this process counted them (chatRows), and the others
   * counted by one query for all of them (a chat it finds none of holds 0). The count could be part
   * of the batch's statement, but that statement costs ~0.8 ms of planning where a plain insert
   * costs ~0.2: a client writing to one new chat after another (the bench's 1,000 recipients in
   * turn) would pay it at every batch.
   */
  private async chatCounts(instanceId: string, chats: readonly string[]): Promise<Map<string, number>> {
    const counted = this.chatRows.get(instanceId);
    const out = new Map<string, number>();
    const unknown: string[] = [];
    for (const chat of chats) {
      const n = counted?.get(chat);
      if (n === undefined) unknown.push(chat);
      else out.set(chat, n);
    }
    if (unknown.length === 0) return out;
    const { rows } = await this.db.query<{ chat_id: string; n: number }>(
      'message store',
      'SELECT chat_id, count(*)::integer AS n FROM messages WHERE instance_id = $1 AND chat_id = ANY ($2::text[]) GROUP BY chat_id',
      [instanceId, unknown],
    );
    const found = new Map(rows.map((r) => [r.chat_id, r.n]));
    for (const chat of unknown) out.set(chat, found.get(chat) ?? 0);
    return out;
  }

  /** Remembers how many rows a chat holds now (a bounded number of chats per instance). */
  private countRows(instanceId: string, chatId: string, n: number): void {
    let counted = this.chatRows.get(instanceId);
    if (!counted) this.chatRows.set(instanceId, (counted = new Map()));
    counted.delete(chatId);
    counted.set(chatId, n);
    // The chat written longest ago is counted again when it comes back.
    if (counted.size > MAX_COUNTED_CHATS) counted.delete(counted.keys().next().value!);
  }

  async recordOutgoing(instanceId: string, m: StoredMessage, durable: boolean, options: { mayWait?: boolean } = {}): Promise<void> {
    // Only after a write that reached the database and passed its fencing (a debited send's credit
    // hold, or a spare hold stored at most SPARE_FRESH_MS before, credits.ts): a premium send's
    // record is its only write before the message leaves, so it must be stored (and fenced) first.
    // The epoch is taken now, before any wait: a write carries the tenure it was made in.
    const epoch = this.epoch(instanceId);
    if (durable || m.status !== 'pending' || options.mayWait !== true) return this.insert(instanceId, m, durable, epoch);
    // A lazy `pending` record waits for its status (see the class comment); a write that fails
    // is logged (the port allows it to be lost), and the status waiting on it fails with it.
    await this.prunedOnce(instanceId);
    this.inserts.add(instanceId, { kept: this.trim(m), durable: false, epoch }, DEFER_PENDING_MS).catch((err: unknown) => {
      this.options.logger.error({ instanceId, messageId: m.messageId, err: errorMessage(err) }, 'a pending message could not be recorded');
    });
  }

  async recordInbound(instanceId: string, m: InboundMessage, media: StoredMessage['media'], extra?: InboundExtra): Promise<void> {
    const epoch = this.epoch(instanceId);
    const stored: StoredMessage = {
      messageId: m.messageId,
      chatId: m.chatId,
      fromMe: false,
      sender: m.sender,
      from: m.from,
      ...(m.fromName !== undefined ? { fromName: m.fromName } : {}),
      type: m.type,
      status: 'delivered',
      ...(m.text !== undefined ? { text: m.text } : {}),
      ...(m.caption !== undefined ? { caption: m.caption } : {}),
      ...(m.quoted ? { quoted: m.quoted } : {}),
      ...(m.mentions ? { mentions: m.mentions } : {}),
      ...(media ? { media } : {}),
      ...(m.location ? { location: m.location } : {}),
      ...(m.contacts ? { contacts: m.contacts } : {}),
      ...(m.poll ? { poll: m.poll } : {}),
      ...(m.poll && extra?.pollSecret !== undefined ? { pollSecret: extra.pollSecret } : {}),
      timestamp: Date.parse(m.timestamp),
      updatedAt: this.options.clock.now(),
    };
    await this.insert(instanceId, stored, true, epoch);
  }

  async setStatus(instanceId: string, messageId: string, status: MessageStatus, error?: string, durable = true): Promise<StatusChange | null> {
    // No stored row has a NUL in its id (PostgreSQL's text refuses it): such a status changes
    // nothing, and is not let into a batch it would fail.
    if (messageId.includes('\u0000')) return null;
    const epoch = this.epoch(instanceId);
    await this.prunedOnce(instanceId);
    // Merged only into a row of the same tenure (one of another is refused, and the status with it).
    const waiting = this.inserts.waiting(instanceId, (r) => r.kept.messageId === messageId && r.epoch === epoch);
    if (waiting) return this.merge(instanceId, waiting, status, error, durable);
    await this.ready(instanceId);
    return this.statuses.add(instanceId, { durable, epoch, messageId, status, error: error === undefined ? null : error.replaceAll('\u0000', '') });
  }

  /** A status of a message whose row is not written yet: set on the row, stored with it. */
  private async merge(instanceId: string, waiting: Waiting<NewRow, boolean>, status: MessageStatus, error: string | undefined, durable: boolean): Promise<StatusChange | null> {
    const row = waiting.item;
    const from = row.kept.status;
    const moved = isForward(from, status);
    if (moved) {
      row.kept = { ...row.kept, status, updatedAt: this.options.clock.now(), ...(error !== undefined ? { error } : {}) };
      if (durable) row.durable = true;
    }
    // Nothing more to wait for: the row goes with the next batch.
    this.inserts.now(instanceId);
    const stored = await waiting.done;
    return moved && stored ? { messageId: row.kept.messageId, chatId: row.kept.chatId, from, to: status } : null;
  }

  /** One statement for a batch of one instance's statuses (a message twice in it: the later in the next). */
  private async statusBatch(instanceId: string, items: NewStatus[]): Promise<Array<StatusChange | null>> {
    const out = new Array<StatusChange | null>(items.length).fill(null);
    const { first, rest } = firstOfEach(items, (i) => i.messageId);
    const { rows } = await this.db.query<{ message_id: string; from_status: MessageStatus; chat_id: string }>(
      'message store',
      `WITH v AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $6::bigint[]) AS v(message_id, status, error, lease_epoch)),
      old AS (SELECT m.message_id, m.status FROM messages m WHERE m.instance_id = $1 AND m.message_id = ANY ($2::text[]) ORDER BY m.message_id FOR UPDATE)
      UPDATE messages m SET status = v.status, updated_at = $5, error = COALESCE(v.error, m.error), lease_epoch = v.lease_epoch FROM old JOIN v ON v.message_id = old.message_id
      WHERE m.instance_id = $1 AND m.message_id = old.message_id AND ${forward('v.status')}
      RETURNING m.message_id, old.status AS from_status, m.chat_id`,
      [instanceId, first.map(([, i]) => i.messageId), first.map(([, i]) => i.status), first.map(([, i]) => i.error), this.options.clock.now(), first.map(([, i]) => i.epoch)],
      !items.some((i) => i.durable),
    );
    const changed = new Map(rows.map((r) => [r.message_id, r]));
    for (const [k, i] of first) {
      const r = changed.get(i.messageId);
      if (r) out[k] = { messageId: i.messageId, chatId: r.chat_id, from: r.from_status, to: i.status };
    }
    if (rest.length > 0) {
      const later = await this.statusBatch(instanceId, rest.map(([, i]) => i));
      rest.forEach(([k], j) => (out[k] = later[j] ?? null));
    }
    return out;
  }

  async edited(instanceId: string, messageId: string, text: string): Promise<boolean> {
    const epoch = this.epoch(instanceId);
    await this.ready(instanceId);
    const r = await this.db.query('message store', 'UPDATE messages SET edited_text = $3, updated_at = $4, lease_epoch = $5 WHERE instance_id = $1 AND message_id = $2', [
      instanceId,
      messageId,
      this.options.history.enabled ? text : '',
      this.options.clock.now(),
      epoch,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async deleted(instanceId: string, messageId: string): Promise<boolean> {
    const epoch = this.epoch(instanceId);
    await this.ready(instanceId);
    const r = await this.db.query('message store', 'UPDATE messages SET deleted = true, updated_at = $3, lease_epoch = $4 WHERE instance_id = $1 AND message_id = $2', [
      instanceId,
      messageId,
      this.options.clock.now(),
      epoch,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async reaction(instanceId: string, messageId: string, sender: string, emoji: string): Promise<void> {
    const epoch = this.epoch(instanceId);
    await this.ready(instanceId);
    await this.db.query(
      'message store',
      `UPDATE messages SET updated_at = $5, lease_epoch = $6, reactions = CASE WHEN $4 = '' THEN COALESCE(reactions, '{}'::jsonb) - $3::text
        ELSE COALESCE(reactions, '{}'::jsonb) || jsonb_build_object($3::text, $4::text) END
      WHERE instance_id = $1 AND message_id = $2`,
      [instanceId, messageId, sender, emoji, this.options.clock.now(), epoch],
      true,
    );
  }

  async pollVote(instanceId: string, messageId: string, voter: string, vote: StoredVote): Promise<boolean> {
    const epoch = this.epoch(instanceId);
    if (!this.options.history.enabled) return false;
    await this.ready(instanceId);
    const r = await this.db.query(
      'message store',
      `UPDATE messages SET updated_at = $5, lease_epoch = $6, votes = COALESCE(votes, '{}'::jsonb) || jsonb_build_object($3::text, $4::jsonb)
      WHERE instance_id = $1 AND message_id = $2`,
      [instanceId, messageId, voter, JSON.stringify(vote), vote.at, epoch],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async markRead(instanceId: string, chatId: string): Promise<void> {
    const epoch = this.epoch(instanceId);
    await this.ready(instanceId);
    await this.db.query('message store', "UPDATE messages SET status = 'read', lease_epoch = $3 WHERE instance_id = $1 AND chat_id = $2 AND NOT from_me AND status = 'delivered'", [
      instanceId,
      chatId,
      epoch,
    ], true);
  }

  async removeChat(instanceId: string, chatId: string): Promise<number> {
    await this.ready(instanceId);
    const { rows } = await this.db.query<{ n: number }>(
      'message store',
      `WITH gone AS (DELETE FROM messages WHERE instance_id = $1 AND chat_id = $2 RETURNING message_id, has_media),
      media_gone AS (DELETE FROM media d USING gone WHERE gone.has_media AND d.instance_id = $1 AND d.message_id = gone.message_id)
      SELECT count(*)::integer AS n FROM gone`,
      [instanceId, chatId],
    );
    this.chatRows.get(instanceId)?.delete(chatId);
    return rows[0]?.n ?? 0;
  }

  async get(instanceId: string, messageId: string): Promise<StoredMessage | null> {
    await this.ready(instanceId);
    const { rows } = await this.db.query<MessageRow>('message store', `SELECT ${COLUMNS} FROM messages WHERE instance_id = $1 AND message_id = $2`, [instanceId, messageId]);
    return rows[0] ? merged(rows[0]) : null;
  }

  async chatOf(instanceId: string, messageId: string): Promise<string | null> {
    await this.ready(instanceId);
    const { rows } = await this.db.query<{ chat_id: string }>('message store', 'SELECT chat_id FROM messages WHERE instance_id = $1 AND message_id = $2', [instanceId, messageId]);
    return rows[0]?.chat_id ?? null;
  }

  async chats(instanceId: string): Promise<ChatSummary[]> {
    await this.ready(instanceId);
    const { rows } = await this.db.query<{ chat_id: string; last: number; unread: number; name: string | null }>(
      'message store',
      `SELECT chat_id, max(ts) AS last, (count(*) FILTER (WHERE NOT from_me AND status = 'delivered'))::integer AS unread,
        (array_agg(from_name ORDER BY seq DESC) FILTER (WHERE from_name IS NOT NULL))[1] AS name
      FROM messages WHERE instance_id = $1 GROUP BY chat_id ORDER BY last DESC, min(seq)`,
      [instanceId],
    );
    return rows.map((r) => {
      const isGroup = r.chat_id.endsWith('@g.us');
      return { chatId: r.chat_id, ...(r.name !== null && !isGroup ? { name: r.name } : {}), isGroup, lastMessageAt: r.last, unread: r.unread };
    });
  }

  async search(instanceId: string, text: string, limit: number): Promise<StoredMessage[]> {
    if (!this.historyEnabled) return [];
    await this.ready(instanceId);
    const needle = text.toLowerCase();
    // The newest SEARCH_SCAN rows, then the match in this process (the body is JSON text).
    // As the needle appears inside the JSON text of the body (quotes and backslashes escaped).
    const like = `%${JSON.stringify(needle).slice(1, -1).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const { rows } = await this.db.query<MessageRow & { message_id: string }>(
      'message store',
      `SELECT message_id, ${COLUMNS} FROM (SELECT * FROM messages WHERE instance_id = $1 AND NOT deleted ORDER BY seq DESC LIMIT $2) m
        WHERE lower(m.body) LIKE $3 OR lower(coalesce(m.edited_text, '')) LIKE $3 ORDER BY seq DESC`,
      [instanceId, SEARCH_SCAN, like],
    );
    const out: StoredMessage[] = [];
    for (const r of rows) {
      const m = merged(r);
      if (messageMatches(m, needle)) out.push(m);
      if (out.length >= limit) break;
    }
    return out;
  }

  async chatMessages(instanceId: string, chatId: string, limit: number, before?: string): Promise<ChatPage | null> {
    await this.ready(instanceId);
    let below = Number.MAX_SAFE_INTEGER;
    if (before !== undefined) {
      const { rows } = await this.db.query<{ seq: number }>('message store', 'SELECT seq FROM messages WHERE instance_id = $1 AND message_id = $2 AND chat_id = $3', [instanceId, before, chatId]);
      if (!rows[0]) return (await this.chatExists(instanceId, chatId)) ? { messages: [], nextBefore: null } : null;
      below = rows[0].seq;
    }
    const { rows } = await this.db.query<MessageRow & { message_id: string }>(
      'message store',
      `SELECT message_id, ${COLUMNS} FROM messages WHERE instance_id = $1 AND chat_id = $2 AND seq < $3 ORDER BY seq DESC LIMIT $4`,
      [instanceId, chatId, below, limit + 1],
    );
    if (rows.length === 0 && before === undefined && !(await this.chatExists(instanceId, chatId))) return null;
    const page = rows.slice(0, Math.max(0, limit));
    const more = rows.length > page.length;
    return { messages: page.map(merged), nextBefore: more && page.length > 0 ? page[page.length - 1]!.message_id : null };
  }

  private async chatExists(instanceId: string, chatId: string): Promise<boolean> {
    const { rows } = await this.db.query('message store', 'SELECT 1 FROM messages WHERE instance_id = $1 AND chat_id = $2 LIMIT 1', [instanceId, chatId]);
    return rows.length > 0;
  }

  /** Every 6 hours: what expired, of every instance this process used, and expired media. */
  start(): void {
    const sweep = (): void => {
      const now = this.options.clock.now();
      void (async () => {
        for (const id of this.pruned.keys()) await this.prune(id, now);
        await this.options.media.sweep(now);
      })().catch((err: unknown) => this.options.logger.error({ err: errorMessage(err) }, 'history sweep failed'));
      this.sweepTimer = this.options.timers.after(DAY_MS / 4, sweep);
    };
    this.sweepTimer = this.options.timers.after(DAY_MS / 4, sweep);
  }

  async flush(instanceId?: string): Promise<void> {
    // A status may join its queue while the inserts drain (it waited for them): until both are idle.
    for (let round = 0; round < 10; round++) {
      const busy = instanceId === undefined ? this.inserts.busy || this.statuses.busy : this.inserts.pending(instanceId) || this.statuses.pending(instanceId);
      if (!busy) return;
      if (instanceId === undefined) await Promise.all([this.inserts.drainedAll(), this.statuses.drainedAll()]);
      else await Promise.all([this.inserts.drained(instanceId), this.statuses.drained(instanceId)]);
    }
    this.options.logger.warn({ instanceId }, 'message writes still arriving after 10 rounds of flushing; the rest are written as they come');
  }

  async stop(): Promise<void> {
    this.sweepTimer?.cancel();
    this.sweepTimer = null;
    await this.flush();
  }

  async removeInstance(instanceId: string): Promise<void> {
    if (this.inserts.pending(instanceId)) await this.inserts.drained(instanceId);
    this.pruned.delete(instanceId);
    this.chatRows.delete(instanceId);
    await this.db.query('message store', 'DELETE FROM messages WHERE instance_id = $1', [instanceId]);
    await this.options.media.removeInstance(instanceId);
  }

  /** The instance was removed by other means (Storage.removeInstance): forget that it was pruned. */
  forget(instanceId: string): void {
    this.pruned.delete(instanceId);
    this.chatRows.delete(instanceId);
  }

  adopted(instanceId: string): void {
    this.chatRows.delete(instanceId);
  }
}
