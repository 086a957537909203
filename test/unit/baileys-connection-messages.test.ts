import test from 'ava';
import { proto } from '@whiskeysockets/baileys';
import { GatewayError } from '../../src/domain/errors.js';
import type { InboundMessage } from '../../src/schemas/events.js';
import { incoming, makeHarness, waitFor, type HarnessOptions } from './baileys-fake-socket.js';

async function connected(options: HarnessOptions = {}) {
  const h = await makeHarness(options);
  h.conn.start();
  const sock = await h.socket(1);
  sock.open();
  return { h, sock };
}

test('notify and the offline backlog (append) both arrive, each message once', async (t) => {
  const { h, sock } = await connected();
  sock.upsert([incoming('A'), incoming('B')], 'notify');
  sock.upsert([incoming('B'), incoming('C')], 'append');
  sock.upsert([incoming('A')], 'notify');
  await waitFor(() => h.inbound.length >= 3, 'three messages');
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(
    h.inbound.map((m) => m.messageId),
    ['A', 'B', 'C'],
  );
  t.like(h.inbound[0], { from: '+15551234567', type: 'text', text: 'hello A', fromName: 'Alice' });
  await h.cleanup();
});

test('own messages, status updates and protocol messages are not handed on', async (t) => {
  const { h, sock } = await connected();
  sock.upsert(
    [
      incoming('own', { key: { remoteJid: '15551234567@s.whatsapp.net', fromMe: true, id: 'own' } }),
      incoming('status', { key: { remoteJid: 'status@broadcast', participant: '15551234567@s.whatsapp.net', id: 'status' } }),
      incoming('revoke', { message: { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE } } }),
      incoming('real'),
    ],
    'append',
  );
  await waitFor(() => h.inbound.length >= 1, 'one message');
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(
    h.inbound.map((m) => m.messageId),
    ['real'],
  );
  await h.cleanup();
});

test('LID senders are resolved through the socket\'s LID mapping', async (t) => {
  const { h, sock } = await connected();
  sock.lids.set('4242@lid', '15556667777:0@s.whatsapp.net');
  sock.upsert([incoming('L', { key: { remoteJid: '4242@lid', id: 'L' } })]);
  await waitFor(() => h.inbound.length >= 1, 'message');
  t.like(h.inbound[0], { from: '+15556667777', chatId: '15556667777@s.whatsapp.net' });
  await h.cleanup();
});

test('media messages are typed', async (t) => {
  const { h, sock } = await connected();
  sock.upsert([
    incoming('i', { message: { imageMessage: { caption: 'pic' } } }),
    incoming('v', { message: { videoMessage: {} } }),
    incoming('a', { message: { audioMessage: { ptt: true } } }),
    incoming('d', { message: { documentMessage: { fileName: 'x.pdf' } } }),
    incoming('s', { message: { stickerMessage: {} } }),
  ]);
  await waitFor(() => h.inbound.length >= 5, 'five messages');
  t.deepEqual(
    h.inbound.map((m) => m.type),
    ['image', 'video', 'audio', 'document', 'sticker'],
  );
  t.is(h.inbound[0]?.caption, 'pic');
  await h.cleanup();
});

test('onMessage is awaited in order, and stop() waits for it', async (t) => {
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const { h, sock } = await connected({
    onMessage: async (m: InboundMessage) => {
      order.push(`start ${m.messageId}`);
      if (m.messageId === '1') await gate;
      order.push(`end ${m.messageId}`);
    },
  });
  sock.upsert([incoming('1')]);
  sock.upsert([incoming('2')]);
  await waitFor(() => order.length >= 1, 'first message');
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(order, ['start 1']);
  const stopping = h.conn.stop();
  let stopped = false;
  void stopping.then(() => {
    stopped = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.false(stopped, 'stop() drains pending messages first');
  release();
  await stopping;
  t.deepEqual(order, ['start 1', 'end 1', 'start 2', 'end 2']);
  await h.cleanup();
});

test('a failing onMessage neither crashes nor swallows a later copy of the message', async (t) => {
  let fail = true;
  const { h, sock } = await connected({
    onMessage: async () => {
      if (fail) {
        fail = false;
        throw new Error('outbox full');
      }
    },
  });
  sock.upsert([incoming('X')], 'notify');
  sock.upsert([incoming('X')], 'append');
  await waitFor(() => h.inbound.length >= 1, 'the retried copy');
  t.is(h.inbound[0]?.messageId, 'X');
  t.is(h.conn.status, 'connected');
  await h.cleanup();
});

test('send() refuses with CONNECTION_NOT_READY unless connected', async (t) => {
  const h = await makeHarness();
  const err = await t.throwsAsync(h.conn.send({ kind: 'text', id: 'GW0001', to: '15551234567@s.whatsapp.net', text: 'hi' }), { instanceOf: GatewayError });
  t.is(err?.code, 'CONNECTION_NOT_READY');
  t.is(err?.status, 503);
  h.conn.start();
  (await h.socket(1)).qr('Q');
  await t.throwsAsync(h.conn.send({ kind: 'text', id: 'GW0001', to: '15551234567@s.whatsapp.net', text: 'hi' }), { instanceOf: GatewayError, message: /qr_code_generated/ });
  await h.cleanup();
});

test('send() text: to the chat id, with the id the gateway chose, and getMessage can answer for it', async (t) => {
  const { h, sock } = await connected();
  const { messageId } = await h.conn.send({ kind: 'text', id: '3EB0GATEWAY01', to: '15551234567@s.whatsapp.net', text: 'hello' });
  t.is(messageId, '3EB0GATEWAY01', 'the gateway picks message ids before sending');
  t.deepEqual(sock.sent[0], { jid: '15551234567@s.whatsapp.net', content: { text: 'hello' } });
  const getMessage = sock.config.getMessage;
  t.truthy(getMessage);
  t.deepEqual(await getMessage?.({ id: '3EB0GATEWAY01', remoteJid: '15551234567@s.whatsapp.net', fromMe: true }), { conversation: 'hello' });
  t.is(await getMessage?.({ id: 'unknown' }), undefined);
  await h.cleanup();
});

test('send() media passes the file by path (streamed by Baileys) with mimetype, name and caption', async (t) => {
  const { h, sock } = await connected();
  const base = { kind: 'media', to: '15551234567@s.whatsapp.net', path: '/tmp/upload-1', fileName: 'f.bin' } as const;
  await h.conn.send({ ...base, id: 'M1', mediaType: 'image', mimetype: 'image/png', caption: 'look' });
  await h.conn.send({ ...base, id: 'M2', mediaType: 'video', mimetype: 'video/mp4' });
  await h.conn.send({ ...base, id: 'M3', mediaType: 'audio', mimetype: 'audio/mpeg', caption: 'dropped' });
  await h.conn.send({ ...base, id: 'M4', mediaType: 'document', mimetype: 'application/pdf', fileName: 'invoice.pdf', caption: 'Q1' });
  t.deepEqual(
    sock.sent.map((s) => s.content),
    [
      { image: { url: '/tmp/upload-1' }, mimetype: 'image/png', caption: 'look' },
      { video: { url: '/tmp/upload-1' }, mimetype: 'video/mp4' },
      { audio: { url: '/tmp/upload-1' }, mimetype: 'audio/mpeg' },
      { document: { url: '/tmp/upload-1' }, mimetype: 'application/pdf', fileName: 'invoice.pdf', caption: 'Q1' },
    ],
  );
  await h.cleanup();
});

test('a send racing a close becomes CONNECTION_NOT_READY', async (t) => {
  const { h, sock } = await connected();
  sock.ended = true; // closed underneath, close event not yet delivered
  const err = await t.throwsAsync(h.conn.send({ kind: 'text', id: 'GW0001', to: '15551234567@s.whatsapp.net', text: 'hi' }), { instanceOf: GatewayError });
  t.is(err?.code, 'CONNECTION_NOT_READY');
  await h.cleanup();
});

test('sendPresence is best effort and only while connected', async (t) => {
  const h = await makeHarness();
  await h.conn.sendPresence('+15551234567', 'composing');
  h.conn.start();
  const sock = await h.socket(1);
  sock.open();
  await h.conn.sendPresence('15551234567@s.whatsapp.net', 'composing');
  await h.conn.sendPresence('15551234567@s.whatsapp.net', 'paused');
  t.deepEqual(sock.presence, [
    { type: 'composing', jid: '15551234567@s.whatsapp.net' },
    { type: 'paused', jid: '15551234567@s.whatsapp.net' },
  ]);
  await h.cleanup();
});
