/**
 * Issue 23 (PostgreSQL writes in groups): writes of one instance that arrive together are one
 * statement, yet each keeps the outcome it would have had alone. A value PostgreSQL refuses (a NUL
 * in text) fails only the new message that carries it; the others of its batch are stored, and a
 * status for such an id changes nothing without failing the statuses batched with it. A sender's
 * name with a NUL is stored (the name column drops it; the message keeps it), and one with a lone
 * surrogate too (U+FFFD in the name column).
 */
import test from 'ava';
import { postgresEngine } from './engines.js';
import { outgoing } from './scenarios.js';
import type { InboundMessage } from '../../src/schemas/events.js';

const ID = 'inst_batches01';

test('postgres: one refused value fails only its own write, not the others batched with it', async (t) => {
  const at = await postgresEngine.location();
  const s = await at.open();
  try {
    const now = Date.now();
    const results = await Promise.allSettled([
      s.messages.recordOutgoing(ID, outgoing('GOOD1', 'a@s.whatsapp.net', now), true),
      s.messages.recordOutgoing(ID, outgoing('BAD\u0000ID', 'a@s.whatsapp.net', now + 1), true),
      s.messages.recordOutgoing(ID, outgoing('GOOD2', 'b@s.whatsapp.net', now + 2), false),
    ]);
    t.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    t.truthy(await s.messages.get(ID, 'GOOD1'));
    t.truthy(await s.messages.get(ID, 'GOOD2'));
    const statuses = await Promise.allSettled([s.messages.setStatus(ID, 'GOOD1', 'sent'), s.messages.setStatus(ID, 'BAD\u0000ID', 'sent'), s.messages.setStatus(ID, 'GOOD2', 'delivered')]);
    t.is(statuses[0]!.status, 'fulfilled');
    t.deepEqual(statuses[1], { status: 'fulfilled', value: null }, 'a status for an id no row can have changes nothing');
    t.deepEqual((statuses[2] as PromiseFulfilledResult<unknown>).value, { messageId: 'GOOD2', chatId: 'b@s.whatsapp.net', from: 'pending', to: 'delivered' });
    const named: InboundMessage = { messageId: 'NAMED', chatId: 'c@s.whatsapp.net', isGroup: false, sender: 'c@s.whatsapp.net', from: '+15550001111', fromName: 'Ann\u0000e', type: 'text', text: 'hi', timestamp: new Date(now).toISOString() };
    await s.messages.recordInbound(ID, named, undefined);
    t.is((await s.messages.get(ID, 'NAMED'))?.fromName, 'Ann\u0000e');
    t.is((await s.messages.chats(ID)).find((c) => c.chatId === 'c@s.whatsapp.net')?.name, 'Anne');
    // The rows go to PostgreSQL as JSON, which refuses a lone surrogate where text took U+FFFD: a
    // name cut in the middle of an emoji is still stored (its chat named with U+FFFD), not refused.
    const cut: InboundMessage = { ...named, messageId: 'CUT', chatId: 'd@s.whatsapp.net', sender: 'd@s.whatsapp.net', fromName: 'Bob \ud83d' };
    await s.messages.recordInbound(ID, cut, undefined);
    t.is((await s.messages.get(ID, 'CUT'))?.fromName, 'Bob \ud83d');
    t.is((await s.messages.chats(ID)).find((c) => c.chatId === 'd@s.whatsapp.net')?.name, 'Bob \ufffd');
  } finally {
    await s.close();
    await at.destroy();
  }
});

test('postgres: a debited send\'s pending row takes its sent status before it is written (one row version), and without mayWait it is written, then updated', async (t) => {
  // Issue 23: the deferral is what took a debited send from two row writes to one. A row written
  // once is the first version in its page, (0,1); updated, the visible version is a second one.
  const ctidOf = async (url: string, id: string): Promise<string | undefined> => {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<{ ctid: string }>('SELECT ctid::text FROM messages WHERE message_id = $1', [id])).rows[0]?.ctid;
    } finally {
      await c.end();
    }
  };
  for (const mayWait of [true, false]) {
    const at = await postgresEngine.location();
    const s = await at.open();
    try {
      await s.messages.recordOutgoing(ID, outgoing('ONE', 'a@s.whatsapp.net', Date.now()), false, { mayWait });
      t.deepEqual(await s.messages.setStatus(ID, 'ONE', 'sent', undefined, false), { messageId: 'ONE', chatId: 'a@s.whatsapp.net', from: 'pending', to: 'sent' });
      t.is((await s.messages.get(ID, 'ONE'))?.status, 'sent');
      t.is(await ctidOf(at.address, 'ONE'), mayWait ? '(0,1)' : '(0,2)', mayWait ? 'written once, with its status' : 'written, then updated');
    } finally {
      await s.close();
      await at.destroy();
    }
  }
});
