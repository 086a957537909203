/**
 * Guards issue 24 item 1 on sandbox instances (a real daemon, real HTTP): POST /send-media also
 * takes JSON with `url` (fetched from a real local server) or `base64`, and `as`: a voice note
 * (Opus as it is; other audio converted with ffmpeg; no ffmpeg: a clear 415), a sticker (webp
 * only), a video note, a document; multipart takes `as` too. A private URL and a body over
 * media.maxBytes are refused before anything is sent or charged. Answers match /openapi.json.
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomPng } from '../protocol-double/fixtures.js';
import { NOTE_MP4, STICKER_WEBP, VOICE_OGG, wav } from '../fixtures/media/media.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { documentChecker } from '../helpers/document-check.js';

const phone = '+15551234567';

async function fileServer(files: Record<string, { type: string; body: Buffer }>): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const f = files[req.url ?? ''];
    if (!f) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': f.type, 'content-length': String(f.body.length) }).end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

async function sentLog(d: TestDaemon, inst: { id: string; key: string }): Promise<Array<Record<string, unknown>>> {
  return (await d.request('GET', `/api/${inst.id}/sandbox/sent`, { key: inst.key })).body.messages as Array<Record<string, unknown>>;
}

test('JSON send-media: base64 and url, each typed by content; answers and stored media match', async (t) => {
  const png = randomPng(8);
  const files = await fileServer({ '/docs/menu.pdf': { type: 'application/pdf', body: Buffer.from('%PDF-1.4 the menu') }, '/img': { type: 'application/octet-stream', body: png } });
  const d = await startTestDaemon();
  t.teardown(async () => {
    await d.close();
    files.server.close();
  });
  const check = await documentChecker(d);
  const inst = await d.connectedSandbox({ credits: 5 });
  const byBase64 = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone, base64: png.toString('base64'), caption: 'a pixel' } });
  t.is(byBase64.status, 200, JSON.stringify(byBase64.body));
  t.is(check(byBase64, '/api/{id}/send-media', 'POST'), null);
  t.like(byBase64.body, { mediaType: 'image', quotaRemaining: '4' });
  const byUrl = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone, url: `${files.url}/docs/menu.pdf` } });
  t.is(byUrl.status, 200, JSON.stringify(byUrl.body));
  t.like(byUrl.body, { mediaType: 'document', quotaRemaining: '3' });
  // The name comes from the URL; the stored copy is the fetched bytes.
  const media = await d.request('GET', `/api/${inst.id}/messages/${byUrl.body.messageId}/media`, { key: inst.key });
  t.is(media.status, 200);
  t.is(String(media.body), '%PDF-1.4 the menu');
  const asDocument = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone, url: `${files.url}/img`, as: 'document', fileName: 'pixel.png' } });
  t.like(asDocument.body, { mediaType: 'document', as: 'document' });
  t.deepEqual((await sentLog(d, inst)).map((m) => m.type), ['image', 'document', 'document']);
});

test('as voice: Opus goes as it is, other audio is converted with ffmpeg; as sticker needs webp; as video-note a video; multipart takes as too', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();
  const send = (json: Record<string, unknown>) => d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone, ...json } });

  const opus = await send({ base64: VOICE_OGG.toString('base64'), as: 'voice' });
  t.is(opus.status, 200, JSON.stringify(opus.body));
  t.like(opus.body, { mediaType: 'audio', as: 'voice' });
  const converted = await send({ base64: wav().toString('base64'), as: 'voice' });
  t.is(converted.status, 200, JSON.stringify(converted.body));
  // What was sent is Opus in Ogg now (the stored copy is what left).
  const stored = await d.request('GET', `/api/${inst.id}/messages/${converted.body.messageId}`, { key: inst.key });
  t.like(stored.body, { type: 'audio', media: { mimetype: 'audio/ogg; codecs=opus' } });
  const bytes = (await d.request('GET', `/api/${inst.id}/messages/${converted.body.messageId}/media`, { key: inst.key })).body as Buffer;
  t.is(Buffer.from(bytes).subarray(0, 4).toString(), 'OggS');
  t.true(Buffer.from(bytes).includes(Buffer.from('OpusHead')));

  const notAudio = await send({ base64: randomPng(4).toString('base64'), as: 'voice' });
  t.is(notAudio.status, 415);
  t.regex(notAudio.body.error.message, /a voice note is audio/);

  const sticker = await send({ base64: STICKER_WEBP.toString('base64'), as: 'sticker' });
  t.like(sticker.body, { mediaType: 'sticker', as: 'sticker' });
  const pngSticker = await send({ base64: randomPng(4).toString('base64'), as: 'sticker' });
  t.is(pngSticker.status, 415);
  t.regex(pngSticker.body.error.message, /a sticker is image\/webp; this file is image\/png/);

  const note = await send({ base64: NOTE_MP4.toString('base64'), as: 'video-note' });
  t.like(note.body, { mediaType: 'video', as: 'video-note' });

  const form = new FormData();
  form.set('phone', phone);
  form.set('as', 'sticker');
  form.set('file', new Blob([new Uint8Array(STICKER_WEBP)], { type: 'image/webp' }), 's.webp');
  const multipart = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, body: form });
  t.like(multipart.body, { mediaType: 'sticker', as: 'sticker' });

  const log = await sentLog(d, inst);
  t.deepEqual(
    log.map((m) => [m.type, m.as]),
    [
      ['audio', 'voice'],
      ['audio', 'voice'],
      ['sticker', 'sticker'],
      ['video', 'video-note'],
      ['sticker', 'sticker'],
    ],
  );
});

test('without ffmpeg a non-Opus voice note is a clear 415 naming media.ffmpegPath; Opus still works', async (t) => {
  const d = await startTestDaemon({ config: { media: { ffmpegPath: '/nonexistent/ffmpeg' } } });
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ credits: 2 });
  const res = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone, base64: wav().toString('base64'), as: 'voice' } });
  t.is(res.status, 415);
  t.is(res.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');
  t.regex(res.body.error.message, /converting audio\/wav needs ffmpeg, which could not be run \(media\.ffmpegPath: "\/nonexistent\/ffmpeg"\)/);
  const opus = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone, base64: VOICE_OGG.toString('base64'), as: 'voice' } });
  t.is(opus.status, 200);
  t.is(opus.body.quotaRemaining, '1', 'the refused one cost nothing');
});

test('a private URL and a file over media.maxBytes are refused before anything is sent or charged', async (t) => {
  const files = await fileServer({ '/big': { type: 'image/png', body: Buffer.alloc(4096, 1) }, '/small': { type: 'application/pdf', body: Buffer.from('%PDF-1.4 x') } });
  const strict = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: false }, media: { maxBytes: 2048 } } });
  const open = await startTestDaemon({ config: { media: { maxBytes: 2048 } } });
  t.teardown(async () => {
    await strict.close();
    await open.close();
    files.server.close();
  });
  const check = await documentChecker(strict);
  const a = await strict.connectedSandbox({ credits: 3 });
  const privateUrl = await strict.request('POST', `/api/${a.id}/send-media`, { key: a.key, json: { phone, url: `${files.url}/small` } });
  t.is(privateUrl.status, 400);
  t.is(privateUrl.body.error.code, 'MEDIA_FETCH_FAILED');
  t.regex(privateUrl.body.error.message, /127\.0\.0\.1 is a loopback\/private address; set webhooks\.allowPrivateTargets/);
  t.is(check(privateUrl, '/api/{id}/send-media', 'POST'), null);
  t.deepEqual(files.hits, [], 'the private address was never contacted');

  const b = await open.connectedSandbox({ credits: 3 });
  const big = await open.request('POST', `/api/${b.id}/send-media`, { key: b.key, json: { phone, url: `${files.url}/big` } });
  t.is(big.status, 400);
  t.regex(big.body.error.message, /larger than media\.maxBytes \(4096 > 2048 bytes\)/);
  const bigBase64 = await open.request('POST', `/api/${b.id}/send-media`, { key: b.key, json: { phone, base64: Buffer.alloc(3000, 7).toString('base64') } });
  t.is(bigBase64.status, 413);
  const both = await open.request('POST', `/api/${b.id}/send-media`, { key: b.key, json: { phone, url: `${files.url}/small`, base64: 'AAAA' } });
  t.is(both.status, 400);
  t.regex(both.body.error.message, /either url or base64/);
  const neither = await open.request('POST', `/api/${b.id}/send-media`, { key: b.key, json: { phone } });
  t.is(neither.body.error.code, 'MISSING_FIELD');
  const missing = await open.request('POST', `/api/${b.id}/send-media`, { key: b.key, json: { phone, url: `${files.url}/nothing-here` } });
  t.regex(missing.body.error.message, /HTTP 404/);

  for (const [d, inst] of [
    [strict, a],
    [open, b],
  ] as const) {
    t.deepEqual(await sentLog(d, inst), [], 'nothing was sent');
    t.is((await d.request('GET', `/api/${inst.id}/status`, { key: inst.key })).body.quotaRemaining, '3', 'nothing was charged');
  }
});
