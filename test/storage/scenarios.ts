/**
 * Workloads the crash children run (crash-child.ts). Each acknowledges (ack) only what the port
 * promised is durable, so the parent can check exactly that after a kill -9.
 */
import type { AuthSnapshot } from '../../src/storage/ports/auth-state.js';
import type { StoredMessage } from '../../src/storage/ports/messages.js';
import type { Storage } from '../../src/storage/storage.js';

/**
 * `ack` prints one line for the parent and resolves once the line is in the pipe (the kernel's),
 * where a kill -9 cannot take it back. Node may hold a write to a full pipe in the process; what is
 * held there dies with it. A scenario that acknowledges a write before making it (an outcome) must
 * wait for that, or the parent misses an ack whose write reached the disk.
 */
export type Scenario = (storage: Storage, args: unknown, ack: (value: unknown) => Promise<void>) => Promise<void>;

/** A message as the send path stores it (outgoing, text). */
export function outgoing(messageId: string, chatId: string, at: number, text = `text of ${messageId}`): StoredMessage {
  return { messageId, chatId, fromMe: true, sender: null, from: null, type: 'text', status: 'pending', text, timestamp: at, updatedAt: at };
}

/** An auth snapshot whose creds and every key table carry the same counter (one moment). */
export function authSnapshot(n: number, paired = true): AuthSnapshot {
  const tables = ['pre-key', 'session'].map((type) => ({ type, changed: true, json: () => JSON.stringify({ n, type }) }));
  return { creds: JSON.stringify({ n, me: paired ? { id: '15551234567@s.whatsapp.net' } : null }), tables, paired };
}

export const SCENARIOS: Record<string, Scenario> = {
  /** Concurrent sends against one instance's credits: ack {sent} after each debit. */
  async debits(storage, args, ack) {
    const { id, sends, concurrency } = args as { id: string; sends: number; concurrency: number };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < sends) {
        next += 1;
        const hold = await storage.credits.hold(id);
        if (!hold) return;
        const balance = await hold.commit();
        await ack({ balance });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  },

  /** Instances created one after another, each with 3 starting credits: ack {id} once created. */
  async creates(storage, args, ack) {
    const { count } = args as { count: number };
    for (let i = 0; i < count; i++) {
      const created = await storage.instances.create({ name: `crash ${i}`, owner: `owner${i % 3}` }, (id) => storage.credits.add(id, 3).then(() => undefined));
      await ack({ id: created.record.id, trialGranted: created.trialGranted });
    }
  },
  /** Durable messages (outgoing with their sent status, and inbound), 4 writers: ack {id} once stored. */
  async messages(storage, args, ack) {
    const { id, count } = args as { id: string; count: number };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const n = next++;
        const messageId = `M${n}`;
        if (n % 2 === 0) {
          await storage.messages.recordOutgoing(id, outgoing(messageId, `chat${n % 5}@s.whatsapp.net`, Date.now()), true);
          await storage.messages.setStatus(id, messageId, 'sent', undefined, true);
        } else {
          await storage.messages.recordInbound(id, { messageId, chatId: `chat${n % 5}@s.whatsapp.net`, isGroup: false, sender: '15550000000@s.whatsapp.net', from: '+15550000000', type: 'text', text: `hi ${n}`, timestamp: new Date().toISOString() }, undefined);
        }
        await ack({ id: messageId, fromMe: n % 2 === 0 });
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  },
  /** Media stored one after another: ack {id, size} once stored. */
  async media(storage, args, ack) {
    const { id, count } = args as { id: string; count: number };
    for (let n = 0; n < count; n++) {
      const bytes = new Uint8Array(1000 + n).fill(n % 256);
      await storage.media.put(id, `media${n}`, { bytes }, Date.now());
      await ack({ id: `media${n}`, size: bytes.length });
    }
  },
  /** Auth snapshots one after another, each a new moment: ack {n} once written. */
  async auth(storage, args, ack) {
    const { id, count } = args as { id: string; count: number };
    for (let n = 1; n <= count; n++) {
      await storage.auth.write(id, authSnapshot(n));
      await ack({ n });
    }
  },
  /**
   * Webhook deliveries stored under traffic (the outbox port): `chats` chats, each with up to 4
   * appends in flight, seq handed out in issue order as the scheduler does; ack {chat, n, id, seq}
   * once an append resolved (durable). Deliveries `finishBehind` acks old are marked delivered
   * (ack {finished: id} in the pipe before the write) and the history pruned to 20, so the journal fills with
   * what it no longer keeps and is compacted under traffic.
   */
  async 'outbox-appends'(storage, args, ack) {
    const { instanceId, chats, bodyBytes, finishBehind } = args as { instanceId: string; chats: number; bodyBytes: number; finishBehind: number };
    let seq = 0;
    const acked: Array<{ id: string; seq: number; lane: string; createdAt: string }> = [];
    const finish = (): void => {
      const r = acked[acked.length - 1 - finishBehind];
      if (!r || r.id === '') return;
      const at = new Date().toISOString();
      const patch = { id: r.id, seq: r.seq, status: 'delivered' as const, attempts: 1, lastAttemptAt: at, lastError: null, lastStatus: 200, nextAttemptAt: null, deliveredAt: at, finishedAt: at, redeliveries: 0 };
      r.id = '';
      // The parent must know of the outcome before it can reach the disk (see Scenario's ack).
      void ack({ finished: patch.id }).then(async () => {
        await storage.outbox.saveOutcome(instanceId, patch, { durable: true }).catch(() => undefined);
        await storage.outbox.pruneHistory(instanceId, 20).catch(() => undefined);
      });
    };
    const chat = async (k: number): Promise<void> => {
      const inFlight = new Set<Promise<void>>();
      for (let n = 1; ; n++) {
        const now = new Date().toISOString();
        const id = `msg_${Date.now().toString(36).padStart(9, '0')}${k.toString(16).padStart(4, '0')}${n.toString(16).padStart(12, '0')}`;
        const record = {
          v: 1 as const,
          id,
          instanceId,
          type: 'qr.updated' as const,
          lane: `chat:${k}`,
          seq: ++seq,
          createdAt: now,
          status: 'pending' as const,
          attempts: 0,
          lastAttemptAt: null,
          lastError: null,
          lastStatus: null,
          nextAttemptAt: now,
          deliveredAt: null,
          finishedAt: null,
          redeliveries: 0,
          event: { type: 'qr.updated' as const, instanceId, timestamp: now, data: { qr: `${k}:${n}:${'q'.repeat(bodyBytes)}` } },
        };
        const p = storage.outbox.append(record).then(() => {
          acked.push({ id, seq: record.seq, lane: record.lane, createdAt: now });
          void ack({ chat: k, n, id, seq: record.seq });
          finish();
        });
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        if (inFlight.size >= 4) await Promise.race(inFlight);
      }
    };
    await Promise.all(Array.from({ length: chats }, (_, k) => chat(k)));
  },
};
