/**
 * A files data dir holding every kind of state, written through the files engine's own ports (fast,
 * and exactly what the engine stores): instances of several owners (trial records), credits added
 * and spent (and a hold a stop interrupted), message history in and out over several chats with
 * statuses, edits, reactions, deletions, a chat marked read, media bytes, WhatsApp auth state
 * (creds and Signal key tables with Baileys-style buffers), a flow with open handovers and
 * conversation positions, webhook deliveries (pending and finished), usage on several days,
 * instance settings (a proxy with its password, calls rejected) and webhooks with custom headers and
 * chat filters; and, gateway-wide, an operator of each role (with passwords to sign in with) and
 * audit entries over several days. For the migration tests.
 */
import { randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { DAY_MS, systemClock } from '../../src/domain/clock.js';
import { newMessageId } from '../../src/domain/ids.js';
import { hashPassword } from '../../src/domain/passwords.js';
import { systemTimers } from '../../src/domain/timers.js';
import type { GatewayEvent } from '../../src/events/types.js';
import { exampleFlow } from '../../src/flows/example.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import type { Flow } from '../../src/schemas/flow.js';
import { openFileStorage } from '../../src/storage/files/index.js';
import { storePaths } from '../../src/storage/files/paths.js';
import type { AuditEntry } from '../../src/storage/ports/audit.js';
import type { Storage } from '../../src/storage/storage.js';
import { newDeliveryId, newDeliveryRecord } from '../../src/webhooks/delivery-record.js';
import { prepareDataDir, type ConfigPatch } from './daemon.js';

export interface FixtureOptions {
  instances?: number;
  /** Messages per instance (half in, half out, over 3 chats). */
  messages?: number;
  /** Media files per instance, and the bytes of each. */
  media?: number;
  mediaBytes?: number;
  /** Audit entries written besides the fixture's own (today, in batches: a large log in seconds). */
  extraAudit?: number;
  config?: ConfigPatch;
}

export interface FixtureOperator {
  name: string;
  role: 'admin' | 'agent';
  password: string;
}

export interface Fixture {
  secret: string;
  instances: Array<{ id: string; key: string }>;
  /** An admin, and an agent of the first instance. */
  operators: FixtureOperator[];
  /** Audit log entries written (over three UTC days). */
  auditEntries: number;
}

/** Per instance: days with usage, messages sent and credits debited on them (see `fill`). */
export const FIXTURE_USAGE = { days: 3, sent: 6, debited: 4 } as const;

/** A Baileys-like buffer as its BufferJSON stores one. */
const buf = (n: number): { type: 'Buffer'; data: string } => ({ type: 'Buffer', data: randomBytes(n).toString('base64') });

export async function writeFilesFixture(dataDir: string, options: FixtureOptions = {}): Promise<Fixture> {
  const secret = await prepareDataDir(dataDir, { plans: { trialDays: 7 }, ...options.config });
  const config = loadConfig(dataDir);
  const storage: Storage = await openFileStorage({ dataDir, config, clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), guard: UNGUARDED });
  const made: Fixture['instances'] = [];
  const operators: FixtureOperator[] = [
    { name: 'ada.admin', role: 'admin', password: `pw-${randomBytes(9).toString('base64url')}` },
    { name: 'bob@agents', role: 'agent', password: `pw-${randomBytes(9).toString('base64url')}` },
  ];
  let auditEntries = 0;
  try {
    const n = options.instances ?? 3;
    for (let i = 0; i < n; i++) {
      const created = await storage.instances.create({
        name: `shop ${i}`,
        owner: `owner${i % 2}`,
        premiumDays: i,
        webhook: i % 2 === 0 ? { url: 'http://127.0.0.1:9/hook', secret: `whsec_${randomBytes(24).toString('base64')}`, events: null } : null,
      });
      const id = created.record.id;
      made.push({ id, key: created.apiKey });
      await fill(storage, id, i, options);
    }
    auditEntries = await gatewayWide(storage, operators, made.map((m) => m.id));
    const extra = options.extraAudit ?? 0;
    for (let k = 0; k < extra; k += 200) {
      // Concurrent appends share each fdatasync (group commit).
      const batch = Array.from({ length: Math.min(200, extra - k) }, (_, j) => ({ at: new Date().toISOString(), actor: 'secret', action: 'credits.add', instanceId: made[(k + j) % made.length]!.id, target: String(k + j), outcome: 'ok' }));
      await Promise.all(batch.map((e) => storage.audit.append(e)));
    }
    auditEntries += extra;
  } finally {
    await storage.close();
  }
  // A hold whose send a stop interrupted (the files engine releases it at its next start).
  for (const { id } of made) await appendFile(storePaths(dataDir).credits(id).replace(/\.json$/, '.jsonl'), '{"hold":["interrupted-1"]}\n');
  return { secret, instances: made, operators, auditEntries };
}

/** Operators and the audit log: the gateway's, not one instance's. Returns the audit entries written. */
async function gatewayWide(storage: Storage, operators: FixtureOperator[], ids: string[]): Promise<number> {
  const now = Date.now();
  const created = new Date(now - 2 * DAY_MS).toISOString();
  for (const o of operators) {
    const ok = await storage.operators.create({ name: o.name, role: o.role, instances: o.role === 'agent' ? ids.slice(0, 1) : [], passwordHash: await hashPassword(o.password), createdAt: created, passwordChangedAt: created });
    if (!ok) throw new Error(`operator ${o.name} exists already`);
  }
  // Over three UTC days (three day files), in the order they happened; some on an instance.
  const at = (daysAgo: number, ms: number): string => new Date(now - daysAgo * DAY_MS + ms).toISOString();
  const entries: AuditEntry[] = [
    ...operators.map((o, k) => ({ at: at(2, k), actor: 'secret', action: 'operator.add', target: o.name, outcome: 'ok' })),
    { at: at(1, 0), actor: 'anonymous', action: 'panel.signin', outcome: 'UNAUTHORIZED' },
    ...ids.map((id, k) => ({ at: at(1, 1 + k), actor: 'secret', action: 'credits.add', instanceId: id, outcome: 'ok' })),
    ...ids.map((id) => ({ at: at(0, -1000), actor: `instance:${id}`, action: 'key.rotate', instanceId: id, outcome: 'ok' })),
    { at: at(0, -500), actor: `operator:${operators[1]!.name}`, action: 'handover.reply', instanceId: ids[0]!, target: '15550000000@s.whatsapp.net', outcome: 'INSUFFICIENT_CREDITS' },
  ];
  for (const e of entries) await storage.audit.append(e);
  return entries.length;
}

async function fill(storage: Storage, id: string, i: number, options: FixtureOptions): Promise<void> {
  const now = Date.now();
  // Settings (a proxy with its user and password) on every other instance; webhooks with custom
  // headers (their order kept) and chat filters on the instances that have one.
  await storage.instances.modify(id, (r) => {
    if (i % 2 === 0) r.settings = { proxy: `http://user${i}:secret${i}@127.0.0.1:9`, calls: { autoReject: true, rejectMessage: 'No calls, please write' }, alwaysOnline: false, ignoreGroups: true };
    if (r.webhook) {
      r.webhook.headers = [
        { name: 'Authorization', value: `Bearer tok-${i}` },
        { name: 'X-Tenant', value: `shop-${i}` },
      ];
      r.webhook.filters = { ignoreGroups: true, onlyChats: null, ignoreChats: [`1555000${i}200@s.whatsapp.net`] };
    }
  });
  // Usage on three UTC days (FIXTURE_USAGE): 2 sent (1 debited), 1 (1), 3 (2).
  for (const [daysAgo, sent, debited] of [[2, 2, 1], [1, 1, 1], [0, 3, 2]] as const) {
    for (let k = 0; k < sent; k++) storage.usage.count(id, now - daysAgo * DAY_MS, k < debited);
  }
  await storage.usage.flush();
  await storage.credits.add(id, 100 + i);
  for (let k = 0; k < 3; k++) {
    const hold = await storage.credits.hold(id);
    await hold!.commit();
  }

  const chats = [0, 1, 2].map((c) => ({ phone: `+1555000${i}${c}00`, jid: `1555000${i}${c}00@s.whatsapp.net` }));
  const count = options.messages ?? 30;
  const ids: string[] = [];
  for (let j = 0; j < count; j++) {
    const chat = chats[j % 3]!;
    const messageId = newMessageId();
    ids.push(messageId);
    const timestamp = now - (count - j) * 1000;
    if (j % 2 === 0) {
      await storage.messages.recordOutgoing(id, { messageId, chatId: chat.jid, fromMe: true, sender: null, from: null, type: 'text', status: 'pending', text: `out ${j}`, timestamp, updatedAt: timestamp }, true);
      await storage.messages.setStatus(id, messageId, 'sent');
      if (j % 4 === 0) await storage.messages.setStatus(id, messageId, 'delivered');
    } else {
      await storage.messages.recordInbound(id, { messageId, chatId: chat.jid, isGroup: false, sender: chat.jid, from: chat.phone, fromName: `Contact ${j % 3}`, type: 'text', text: `in ${j}`, timestamp: new Date(timestamp).toISOString() }, undefined);
    }
  }
  if (ids.length >= 4) {
    await storage.messages.edited(id, ids[0]!, 'out 0, edited');
    await storage.messages.deleted(id, ids[1]!);
    await storage.messages.reaction(id, ids[2]!, chats[2]!.jid, '👍');
    await storage.messages.setStatus(id, ids[3]!, 'read');
    await storage.messages.markRead(id, chats[0]!.jid);
    // A poll with its secret and two votes (one changed, one withdrawn).
    const poll = newMessageId();
    await storage.messages.recordOutgoing(
      id,
      { messageId: poll, chatId: chats[0]!.jid, fromMe: true, sender: null, from: null, type: 'poll', status: 'sent', poll: { question: 'Lunch?', options: ['Pizza', 'Soup'], multiple: false }, pollSecret: randomBytes(32).toString('base64'), timestamp: now - 500, updatedAt: now - 500 },
      true,
    );
    await storage.messages.pollVote(id, poll, chats[1]!.jid, { phone: chats[1]!.phone, selected: ['Pizza'], at: now - 400 });
    await storage.messages.pollVote(id, poll, chats[1]!.jid, { phone: chats[1]!.phone, selected: ['Soup'], at: now - 300 });
    await storage.messages.pollVote(id, poll, chats[2]!.jid, { selected: [], at: now - 200 });
  }
  const size = options.mediaBytes ?? 2048;
  for (let k = 0; k < (options.media ?? 2); k++) {
    const chat = chats[k % 3]!;
    const messageId = newMessageId();
    const bytes = randomBytes(size);
    await storage.messages.recordInbound(
      id,
      { messageId, chatId: chat.jid, isGroup: false, sender: chat.jid, from: chat.phone, type: 'image', caption: `photo ${k}`, timestamp: new Date(now).toISOString() },
      { mimetype: 'image/png', size },
    );
    await storage.media.put(id, messageId, { bytes }, now);
  }

  const creds = { noiseKey: { private: buf(32), public: buf(32) }, registrationId: 1000 + i, me: { id: `1999000${i}:1@s.whatsapp.net` }, account: { details: buf(40) } };
  const tables: Record<string, unknown> = {
    'pre-key': Object.fromEntries([1, 2, 3].map((k) => [String(k), { private: buf(32), public: buf(32) }])),
    session: { [`1555000${i}000.0`]: { _sessions: { x: buf(64) } } },
    'app-state-sync-key': { AAAA: { keyData: buf(32) } },
  };
  await storage.auth.write(id, { creds: JSON.stringify(creds), tables: Object.entries(tables).map(([type, t]) => ({ type, changed: true, json: () => JSON.stringify(t) })), paired: true });

  const iso = new Date(now).toISOString();
  await storage.flows.writeFlow(id, { version: 1, revision: `rev-${i}`, updatedAt: iso, flow: exampleFlow() as unknown as Flow });
  const handovers = new Map([[chats[1]!.jid, { chatId: chats[1]!.jid, phone: chats[1]!.phone, fromName: 'Contact 1', flow: 'support', node: 'menu', openedAt: iso, expiresAt: new Date(now + 3_600_000).toISOString() }]]);
  await storage.flows.saveHandovers(id, handovers, handovers.keys());
  const conversations = new Map(chats.map((c) => [c.jid, { phone: c.phone, node: 'menu', revision: `rev-${i}`, updatedAt: iso }]));
  await storage.flows.saveConversations(id, conversations, conversations.keys());

  for (let k = 0; k < 3; k++) {
    const chat = chats[k]!;
    const event: GatewayEvent = { type: 'message.received', instanceId: id, timestamp: iso, data: { messageId: ids[1] ?? newMessageId(), chatId: chat.jid, isGroup: false, sender: chat.jid, from: chat.phone, type: 'text', text: `in ${k}`, timestamp: iso } };
    const record = newDeliveryRecord(event, newDeliveryId(now + k), k + 1, now + k);
    await storage.outbox.append(record);
    if (k === 0) {
      const finished = new Date(now + 5).toISOString();
      await storage.outbox.saveOutcome(id, { ...record, status: 'delivered', attempts: 1, lastAttemptAt: finished, lastStatus: 200, nextAttemptAt: null, deliveredAt: finished, finishedAt: finished }, { durable: true });
    }
  }
}
