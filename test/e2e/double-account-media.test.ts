/**
 * Guards issue 24 items 1 and 2 (media) through the BUILT daemon (a child process; `npm run build`
 * first) and real Baileys against the protocol double, real WhatsApp media encryption on its HTTPS
 * media host: voice notes (Opus as it is, WAV converted with ffmpeg) arrive as PTT, stickers as
 * stickers, video notes as round videos, a file fetched from a URL as a document; inbound voice
 * notes, stickers and video notes say so in media.kind; media the phone sends is a message.sent with
 * its media; a received file whose CDN copy expired is uploaded again by the phone (Baileys'
 * updateMediaMessage) and downloaded; a media status post reaches its audience.
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGatewayOnDouble, type GatewayOnDouble } from '../protocol-double/child.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { NOTE_MP4, STICKER_WEBP, VOICE_OGG, wav } from '../fixtures/media/media.js';
import { waitFor } from '../helpers/daemon.js';

let gw: GatewayOnDouble;
let files: Server;
let filesUrl: string;

/** The bytes of a message's media (the JSON helper would decode them as text). */
async function mediaBytes(id: string): Promise<Buffer> {
  const res = await fetch(`${gw.daemon.url}/api/${gw.id}/messages/${id}/media`, { headers: { 'x-api-key': gw.key } });
  if (res.status !== 200) throw new Error(`media of ${id}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

test.before(async () => {
  gw = await startGatewayOnDouble({ config: { media: { maxBytes: 1024 * 1024 } } });
  files = createServer((req, res) => {
    if (req.url !== '/price-list.pdf') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4 price list');
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});

test.after.always(async () => {
  await gw?.close();
  files?.close();
});

test.afterEach.always((t) => {
  if (gw.double.errors.length > 0) t.log(gw.double.errors);
  if (!t.passed) t.log(gw.output().slice(-6000));
});

test.serial('voice notes arrive as PTT Opus (one sent as Opus, one converted from WAV by ffmpeg), stickers as webp stickers, video notes as round videos', async (t) => {
  const ana = await gw.double.contact('+15550000301', { name: 'Ana' });
  const send = async (json: Record<string, unknown>) => {
    const res = await gw.api('POST', '/send-media', { json: { phone: ana.phone, ...json } });
    t.is(res.status, 200, JSON.stringify(res.body));
    return (await ana.nextMessage()).message;
  };
  const opus = await send({ base64: VOICE_OGG.toString('base64'), as: 'voice' });
  t.true(opus.audioMessage?.ptt, 'a voice note (PTT)');
  t.is(opus.audioMessage?.mimetype, 'audio/ogg; codecs=opus');
  t.deepEqual(ana.download(opus), VOICE_OGG, 'the Opus file went as it was');

  const converted = await send({ base64: wav().toString('base64'), as: 'voice' });
  t.true(converted.audioMessage?.ptt);
  t.is(converted.audioMessage?.mimetype, 'audio/ogg; codecs=opus');
  const ogg = ana.download(converted);
  t.is(ogg.subarray(0, 4).toString(), 'OggS');
  t.true(ogg.includes(Buffer.from('OpusHead')), 'ffmpeg made Opus of the WAV');

  const sticker = await send({ base64: STICKER_WEBP.toString('base64'), as: 'sticker' });
  t.is(sticker.stickerMessage?.mimetype, 'image/webp');
  t.deepEqual(ana.download(sticker), STICKER_WEBP);

  const note = await send({ base64: NOTE_MP4.toString('base64'), as: 'video-note' });
  t.truthy(note.ptvMessage, 'a round video note (ptvMessage)');
  t.deepEqual(ana.download(note), NOTE_MP4);

  const fetched = await send({ url: `${filesUrl}/price-list.pdf`, caption: 'prices' });
  t.is(fetched.documentMessage?.fileName, 'price-list.pdf');
  t.is(fetched.documentMessage?.caption, 'prices');
  t.is(ana.download(fetched).toString(), '%PDF-1.4 price list');
  t.deepEqual(gw.double.errors, []);
});

test.serial('inbound voice notes, stickers and video notes say so in media.kind, and their bytes are served', async (t) => {
  const bo = await gw.double.contact('+15550000302', { name: 'Bo' });
  const to = gw.double.accountJid();
  const voice = await bo.sendMedia(to, VOICE_OGG, 'ptt', { mimetype: 'audio/ogg; codecs=opus' });
  const sticker = await bo.sendMedia(to, STICKER_WEBP, 'sticker', { mimetype: 'image/webp' });
  const note = await bo.sendMedia(to, NOTE_MP4, 'ptv', { mimetype: 'video/mp4' });
  const plain = await bo.sendMedia(to, VOICE_OGG, 'audio', { mimetype: 'audio/ogg; codecs=opus' });
  const event = (id: string) => gw.waitEvent('message.received', (e) => e.data.messageId === id);
  t.like((await event(voice)).data, { type: 'audio', media: { kind: 'voice', mimetype: 'audio/ogg; codecs=opus' } });
  t.like((await event(sticker)).data, { type: 'sticker', media: { kind: 'sticker', mimetype: 'image/webp' } });
  t.like((await event(note)).data, { type: 'video', media: { kind: 'video-note' } });
  t.like((await event(plain)).data, { type: 'audio', media: { kind: 'audio' } });
  t.deepEqual(await mediaBytes(sticker), STICKER_WEBP);
  t.deepEqual(gw.double.errors, []);
});

test.serial('media the phone sends is message.sent with its media (voice note), served by the media route', async (t) => {
  const cy = await gw.double.contact('+15550000303', { name: 'Cy' });
  const id = await gw.double.accountSide.phoneSendsMedia(gw.double.account(), cy.jid, VOICE_OGG, 'ptt', { mimetype: 'audio/ogg; codecs=opus' });
  const sent = await gw.waitEvent('message.sent', (e) => e.data.messageId === id);
  t.like(sent.data, { chatId: cy.jid, fromMe: true, type: 'audio', media: { kind: 'voice', url: `/api/${gw.id}/messages/${id}/media` } });
  t.deepEqual(await mediaBytes(id), VOICE_OGG);
  t.like((await gw.api('GET', `/messages/${id}`)).body, { fromMe: true, type: 'audio' });
  t.false(gw.events('message.received').some((e) => e.data.messageId === id));
});

test.serial('a received file whose CDN copy expired is uploaded again by the phone and downloaded from its new path', async (t) => {
  const di = await gw.double.contact('+15550000304', { name: 'Di' });
  const png = randomPng(24);
  const { message, directPath } = di.mediaMessage(png, 'image', { mimetype: 'image/png', caption: 'expired' });
  gw.double.accountSide.expire(directPath);
  const id = await di.send(gw.double.accountJid(), message, { type: 'media', mediatype: 'image' });
  const received = await gw.waitEvent('message.received', (e) => e.data.messageId === id, 30_000);
  t.like(received.data, { type: 'image', caption: 'expired', media: { url: `/api/${gw.id}/messages/${id}/media` } });
  t.deepEqual(await mediaBytes(id), png);
  const retry = gw.double.accountSide.mediaRetries.find((r) => r.id === id);
  t.truthy(retry, 'Baileys asked the phone to upload it again (a server-error receipt)');
  t.not(retry?.newPath, directPath);
  t.true(gw.double.media.requests.some((r) => r.path === directPath && r.status === 404), 'the first download found the CDN copy gone');
  t.deepEqual(gw.double.errors, []);
});

test.serial('a media status post (an image from base64) reaches its audience and costs one credit', async (t) => {
  const ed = await gw.double.contact('+15550000305', { name: 'Ed' });
  const png = randomPng(16);
  const res = await gw.api('POST', '/status', { json: { base64: png.toString('base64'), caption: 'New in store', audience: [ed.phone] } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { type: 'image', audience: 1 });
  const seen = await waitFor(async () => {
    const m = await ed.nextMessage();
    return m.chat === 'status@broadcast' ? m : null;
  }, 15_000, 'the status at Ed');
  t.is(seen.message.imageMessage?.caption, 'New in store');
  t.deepEqual(ed.download(seen), png);
  t.deepEqual(gw.double.errors, []);
});
