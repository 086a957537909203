/**
 * The message port's contract for polls (issue 24, "Calls, presence, polls": votes are durable):
 * a poll keeps its secret (sent or received) so later votes can be decrypted; each voter's latest
 * vote replaces their earlier one, [] withdraws it; votes survive a reopen and a journal
 * compaction; a vote on a message that is not kept, or with history off, is not stored. Run on
 * every engine.
 */
import { engineTest, testConfig } from './engines.js';
import { outgoing } from './scenarios.js';
import type { StoredMessage } from '../../src/storage/ports/messages.js';
import type { InboundMessage } from '../../src/schemas/events.js';
import { MessageStore } from '../../src/storage/files/messages/store.js';

const ID = 'inst_pollvotes1';
const SECRET = Buffer.alloc(32, 7).toString('base64');

function poll(messageId: string, at: number): StoredMessage {
  const { text: _text, ...base } = outgoing(messageId, '15550001111@s.whatsapp.net', at);
  return { ...base, type: 'poll', poll: { question: 'Lunch?', options: ['Pizza', 'Sushi'], multiple: true }, pollSecret: SECRET };
}

engineTest('poll votes: the latest vote of each voter counts, [] withdraws it, and the poll keeps its secret across a reopen', async (t, at) => {
  const s = await at.open();
  const now = Date.now();
  await s.messages.recordOutgoing(ID, poll('POLL1', now), true);
  t.true(await s.messages.pollVote(ID, 'POLL1', '15550002222@s.whatsapp.net', { phone: '+15550002222', selected: ['Pizza'], at: now + 1 }));
  t.true(await s.messages.pollVote(ID, 'POLL1', '200000000003333@lid', { selected: ['Sushi', 'Pizza'], at: now + 2 }));
  t.true(await s.messages.pollVote(ID, 'POLL1', '15550002222@s.whatsapp.net', { phone: '+15550002222', selected: ['Sushi'], at: now + 3 }), 'a changed vote');
  t.true(await s.messages.pollVote(ID, 'POLL1', '15550004444@s.whatsapp.net', { phone: '+15550004444', selected: ['Pizza'], at: now + 4 }));
  t.true(await s.messages.pollVote(ID, 'POLL1', '15550004444@s.whatsapp.net', { phone: '+15550004444', selected: [], at: now + 5 }), 'a withdrawn vote');
  t.false(await s.messages.pollVote(ID, 'NOPE', '15550002222@s.whatsapp.net', { selected: ['Pizza'], at: now }), 'a poll that is not kept');
  const expected = {
    '15550002222@s.whatsapp.net': { phone: '+15550002222', selected: ['Sushi'], at: now + 3 },
    '200000000003333@lid': { selected: ['Sushi', 'Pizza'], at: now + 2 },
    '15550004444@s.whatsapp.net': { phone: '+15550004444', selected: [], at: now + 5 },
  };
  const got = await s.messages.get(ID, 'POLL1');
  t.deepEqual(got?.votes, expected);
  t.is(got?.pollSecret, SECRET);
  t.is(got?.updatedAt, now + 5);
  await s.close();
  const again = await at.open();
  const reopened = await again.messages.get(ID, 'POLL1');
  t.deepEqual(reopened?.votes, expected);
  t.is(reopened?.pollSecret, SECRET);
  t.deepEqual(reopened?.poll, { question: 'Lunch?', options: ['Pizza', 'Sushi'], multiple: true });
  // The files engine rewrites its journal now and then: votes are merged into the rewritten line.
  if (again.messages instanceof MessageStore) {
    await again.messages.compact(ID);
    t.deepEqual((await again.messages.get(ID, 'POLL1'))?.votes, expected);
    await again.close();
    t.deepEqual((await (await at.open()).messages.get(ID, 'POLL1'))?.votes, expected, 'and after a reopen of the compacted journal');
  }
});

engineTest("poll votes: a received poll keeps the secret its message brought, and votes on it are stored", async (t, at) => {
  const s = await at.open();
  const now = Date.now();
  const m: InboundMessage = {
    messageId: 'INPOLL',
    chatId: '120363000000000001@g.us',
    isGroup: true,
    sender: '200000000005555@lid',
    from: '+15550005555',
    type: 'poll',
    poll: { question: 'Where?', options: ['Here', 'There'], multiple: false },
    timestamp: new Date(now).toISOString(),
  };
  await s.messages.recordInbound(ID, m, undefined, { pollSecret: SECRET });
  t.true(await s.messages.pollVote(ID, 'INPOLL', '15550002222@s.whatsapp.net', { phone: '+15550002222', selected: ['There'], at: now + 1 }));
  await s.close();
  const got = await (await at.open()).messages.get(ID, 'INPOLL');
  t.is(got?.pollSecret, SECRET);
  t.deepEqual(got?.votes, { '15550002222@s.whatsapp.net': { phone: '+15550002222', selected: ['There'], at: now + 1 } });
});

engineTest('poll votes: with history off nothing of a vote is kept (votes are what was said)', async (t, at) => {
  const s = await at.open({ config: testConfig({ history: { enabled: false } }) });
  const now = Date.now();
  await s.messages.recordOutgoing(ID, poll('POLL2', now), true);
  t.false(await s.messages.pollVote(ID, 'POLL2', '15550002222@s.whatsapp.net', { selected: ['Pizza'], at: now + 1 }));
  const got = await s.messages.get(ID, 'POLL2');
  t.is(got?.status, 'pending', 'the lifecycle is kept');
  t.is(got?.votes, undefined);
  t.is(got?.pollSecret, undefined);
});
