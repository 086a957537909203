/**
 * After `gateway storage migrate`: opens the files data dir and the target database with their
 * engines and checks, through the storage ports, that every instance reads the same on both (its
 * record with settings and webhook headers and filters, and everything it stores), and so do the
 * gateway's operators and audit log (order and times included).
 */
import type { ExecutionContext } from 'ava';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/domain/clock.js';
import { systemTimers } from '../../src/domain/timers.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { openFileStorage } from '../../src/storage/files/index.js';
import type { AuditEntry, AuditQuery } from '../../src/storage/ports/audit.js';
import type { ChatSummary } from '../../src/storage/ports/messages.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import type { Storage } from '../../src/storage/storage.js';


async function bytesOf(storage: Storage, id: string, messageId: string): Promise<Buffer | null> {
  const m = await storage.media.get(id, messageId, Date.now());
  if (!m) return null;
  const chunks: Buffer[] = [];
  for await (const c of m.stream()) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The files engine's chats carry their message ids too; the port's summary is the rest. */
const summary = (c: ChatSummary): ChatSummary => ({ chatId: c.chatId, ...(c.name !== undefined ? { name: c.name } : {}), isGroup: c.isGroup, lastMessageAt: c.lastMessageAt, unread: c.unread });

/**
 * Every entry a query finds, newest first, read in pages of 7 at first (so their cursors are exercised
 * too) that double up to 500: the files engine reads its log from the start for each page, so a long
 * log (the 20,000-entry kill test) in pages of 7 took minutes.
 */
async function allAudit(storage: Storage, q: Omit<AuditQuery, 'limit' | 'cursor'> = {}): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | undefined;
  let limit = 7;
  do {
    const page = await storage.audit.query({ ...q, limit, ...(cursor !== undefined ? { cursor } : {}) });
    limit = Math.min(500, limit * 2);
    out.push(...page.entries);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

export interface Compared {
  instances: number;
  messages: number;
  media: number;
  deliveries: number;
  /** Instances with settings, and with a webhook with custom headers and chat filters. */
  settings: number;
  webhookHeaders: number;
  usageDays: number;
  operators: number;
  auditEntries: number;
}

/** Asserts that both engines read the same for every instance; returns what was compared. */
export async function assertSameThroughPorts(t: ExecutionContext, dataDir: string, url: string): Promise<Compared> {
  const config = loadConfig(dataDir);
  const logger = pino({ level: 'silent' });
  const files = await openFileStorage({ dataDir, config, clock: systemClock, timers: systemTimers, logger, guard: UNGUARDED });
  const pgs = await openPostgresStorage({ url, config, clock: systemClock, timers: systemTimers, logger });
  const seen: Compared = { instances: 0, messages: 0, media: 0, deliveries: 0, settings: 0, webhookHeaders: 0, usageDays: 0, operators: 0, auditEntries: 0 };
  try {
    // Whole records: key hashes, plan, settings (a proxy's password too), webhook with its secret, headers and filters.
    t.deepEqual(pgs.instances.list(), files.instances.list(), 'instances and key hashes');
    const operators = await files.operators.list();
    t.deepEqual(await pgs.operators.list(), operators, 'operators (roles, instances, password hashes, times)');
    for (const o of operators) t.deepEqual(await pgs.operators.get(o.name), o, `operator ${o.name}`);
    seen.operators = operators.length;
    const audit = await allAudit(files);
    t.deepEqual(await allAudit(pgs), audit, 'the audit log, newest first, with its times');
    seen.auditEntries = audit.length;
    for (const actor of new Set(audit.map((e) => e.actor))) t.deepEqual(await allAudit(pgs, { actor }), await allAudit(files, { actor }), `audit entries of ${actor}`);
    for (const { id } of files.instances.list()) {
      seen.instances += 1;
      const record = files.instances.require(id);
      if (record.settings) seen.settings += 1;
      if (record.webhook?.headers?.length && record.webhook.filters) seen.webhookHeaders += 1;
      t.deepEqual(pgs.instances.get(id), record, `${id}: record`);
      t.deepEqual(await allAudit(pgs, { instanceId: id }), await allAudit(files, { instanceId: id }), `${id}: audit entries`);
      const usage = await files.usage.days(id, '0001-01-01', '9999-12-31');
      t.deepEqual(await pgs.usage.days(id, '0001-01-01', '9999-12-31'), usage, `${id}: usage per day`);
      seen.usageDays += usage.length;
      t.is(pgs.credits.balance(id), files.credits.balance(id), `${id}: balance`);
      t.is(pgs.credits.available(id), pgs.credits.balance(id), `${id}: no hold copied`);
      const chats = await files.messages.chats(id);
      t.deepEqual((await pgs.messages.chats(id)).map(summary), chats.map(summary), `${id}: chats`);
      for (const chat of chats) {
        const page = await files.messages.chatMessages(id, chat.chatId, 100_000);
        // Order included: newest first, each chat in the order the files engine stored it.
        t.deepEqual(await pgs.messages.chatMessages(id, chat.chatId, 100_000), page, `${id}: ${chat.chatId}`);
        for (const m of page!.messages) {
          seen.messages += 1;
          // Each message whole, as the ports keep it (a poll's secret and votes included).
          t.deepEqual(await pgs.messages.get(id, m.messageId), await files.messages.get(id, m.messageId), `${id}: message ${m.messageId}`);
          if (!m.media) continue;
          const bytes = await bytesOf(files, id, m.messageId);
          if (bytes) seen.media += 1;
          t.deepEqual(await bytesOf(pgs, id, m.messageId), bytes, `${id}: media of ${m.messageId}`);
        }
      }
      t.deepEqual(await pgs.auth.read(id), await files.auth.read(id), `${id}: auth state`);
      t.is(await pgs.auth.isPaired(id), await files.auth.isPaired(id), `${id}: paired`);
      t.deepEqual(await pgs.flows.readFlow(id), await files.flows.readFlow(id), `${id}: flow`);
      t.deepEqual(await pgs.flows.readHandovers(id), await files.flows.readHandovers(id), `${id}: handovers`);
      t.deepEqual(await pgs.flows.readConversations(id), await files.flows.readConversations(id), `${id}: conversations`);
      const listing = await files.outbox.list(id);
      t.deepEqual(await pgs.outbox.list(id), listing, `${id}: deliveries`);
      t.deepEqual((await pgs.outbox.loadPending(id)).deliveries, (await files.outbox.loadPending(id)).deliveries, `${id}: pending deliveries`);
      for (const d of listing.deliveries) {
        seen.deliveries += 1;
        t.deepEqual(await pgs.outbox.readEvent(id, d.id), await files.outbox.readEvent(id, d.id), `${id}: event of ${d.id}`);
      }
    }
  } finally {
    await files.close();
    await pgs.close();
  }
  return seen;
}
