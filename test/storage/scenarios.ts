/**
 * Workloads the crash children run (crash-child.ts). Each acknowledges (ack) only what the port
 * promised is durable, so the parent can check exactly that after a kill -9.
 */
import type { AuthSnapshot } from '../../src/storage/ports/auth-state.js';
import type { StoredMessage } from '../../src/storage/ports/messages.js';
import type { Storage } from '../../src/storage/storage.js';

export type Scenario = (storage: Storage, args: unknown, ack: (value: unknown) => void) => Promise<void>;

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
        ack({ balance });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  },

  /** Instances created one after another, each with 3 starting credits: ack {id} once created. */
  async creates(storage, args, ack) {
    const { count } = args as { count: number };
    for (let i = 0; i < count; i++) {
      const created = await storage.instances.create({ name: `crash ${i}`, owner: `owner${i % 3}` }, (id) => storage.credits.add(id, 3).then(() => undefined));
      ack({ id: created.record.id, trialGranted: created.trialGranted });
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
        ack({ id: messageId, fromMe: n % 2 === 0 });
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
      ack({ id: `media${n}`, size: bytes.length });
    }
  },
  /** Auth snapshots one after another, each a new moment: ack {n} once written. */
  async auth(storage, args, ack) {
    const { id, count } = args as { id: string; count: number };
    for (let n = 1; n <= count; n++) {
      await storage.auth.write(id, authSnapshot(n));
      ack({ n });
    }
  },
};
