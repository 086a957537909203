import test from 'ava';
import { startGatewayOnDouble } from '../protocol-double/child.js';
import { waitFor } from '../helpers/daemon.js';

// The built daemon (a child process) against the protocol double, where timing matters: a daemon
// killed with SIGKILL while a receipt is on its way, and receipts arriving while Baileys still
// buffers its events after a login.

test('kill -9 between the server ack and the receipts: the receipts wait on the server and, after the restart, become message.status delivered and read once each, a message written meanwhile arrives once; Signal state the crash cut short is rebuilt through retry receipts', async (t) => {
  const gw = await startGatewayOnDouble();
  try {
    const ivy = await gw.double.contact('+15550000201', { name: 'Ivy' });
    const res = await gw.api('POST', '/send', { json: { phone: ivy.phone, message: 'before the crash' } });
    t.is(res.status, 200, JSON.stringify(res.body));
    const messageId = res.body.messageId as string;
    // The contact has it, so the server accepted and acked it; the gateway stored `sent`.
    const m = await ivy.nextMessage();
    t.is(m.id, messageId);
    await gw.waitEvent('message.status', (e) => e.data.messageId === messageId && e.data.status === 'sent');
    const device = gw.double.lastDevice()!;
    t.true(gw.double.sessions.some((s) => s.device === device && s.received.some((n) => n.tag === 'message' && n.attrs.id === messageId)));

    await gw.kill9();
    // The contact's phone got it and the user read it while the gateway was down.
    ivy.receipt(m, 'delivery');
    ivy.receipt(m, 'read');
    const whileDown = await ivy.sendText(gw.double.accountJid(), 'written while you were down');
    t.is(gw.double.pending(device).length, 3, 'both receipts and the message wait on the server for the device');

    await gw.restart();
    await gw.waitEvent('message.status', (e) => e.data.messageId === messageId && e.data.status === 'read', 20_000);
    await gw.waitEvent('message.status', (e) => e.data.messageId === messageId && e.data.status === 'delivered');
    const got = await gw.api('GET', `/messages/${messageId}`);
    t.is(got.body.status, 'read');
    t.deepEqual(
      gw.events('message.status').filter((e) => e.data.messageId === messageId).map((e) => e.data.status).filter((s, i, all) => all.indexOf(s) === i),
      ['sent', 'delivered', 'read'],
    );
    t.is(gw.events('message.status').filter((e) => e.data.messageId === messageId && e.data.status === 'delivered').length, 1);
    const offline = await gw.waitEvent('message.received', (e) => e.data.messageId === whileDown, 20_000);
    t.like(offline.data, { chatId: ivy.jid, from: ivy.phone, text: 'written while you were down' });
    await waitFor(() => gw.double.pending(device).length === 0, 10_000, 'the offline stanzas acknowledged');

    // Both ways still work. Baileys saves its Signal state 300 ms after a change: killed sooner, it
    // lost the session the first message opened, cannot decrypt the reply and asks for a retry;
    // the contact answers as a phone does (again on the same session, then a new one from the
    // keys in the second retry receipt).
    const replyId = await ivy.sendText(gw.double.accountJid(), 'after the crash');
    const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === replyId);
    t.is(ev.data.text, 'after the crash');
    t.is(gw.events('message.received').filter((e) => e.data.messageId === whileDown).length, 1, 'the offline message once');
    const again = await gw.api('POST', '/send', { json: { phone: ivy.phone, message: 'still talking' } });
    t.is(again.status, 200);
    const m2 = await ivy.nextMessage();
    // (A restarted Baileys has no device cache: its usync's LID answer makes it fetch new keys and
    // start a new session, so this is a pkmsg again.)
    t.is(m2.text, 'still talking');
    if (ivy.retries.length > 0) t.log('retries answered by the contact:', ivy.retries);
    t.deepEqual(gw.double.errors, []);
  } finally {
    await gw.close();
  }
});

test("receipts Baileys folds into its still-buffered upsert of the send (no history sync from the phone yet) still become message.status", async (t) => {
  // Without the phone's history sync Baileys keeps buffering events after the login; a receipt
  // arriving before anything flushed them is merged into the upsert of our own message instead of
  // being emitted as messages.update.
  const gw = await startGatewayOnDouble({ double: { initialSync: false } });
  try {
    const jo = await gw.double.contact('+15550000202', { name: 'Jo' });
    const res = await gw.api('POST', '/send', { json: { phone: jo.phone, message: 'first words' } });
    t.is(res.status, 200, JSON.stringify(res.body));
    const m = await jo.nextMessage();
    jo.receipt(m, 'delivery');
    await gw.waitEvent('message.status', (e) => e.data.messageId === m.id && e.data.status === 'delivered');
    jo.receipt(m, 'read');
    await gw.waitEvent('message.status', (e) => e.data.messageId === m.id && e.data.status === 'read');
    t.is((await gw.api('GET', `/messages/${m.id}`)).body.status, 'read');
    t.deepEqual(gw.double.errors, []);
  } finally {
    await gw.close();
  }
});
