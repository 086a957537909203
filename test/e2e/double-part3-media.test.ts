/**
 * Guards issue 24's definition of done for "Media from a URL or base64, voice notes, stickers" and
 * the media form of `POST /status`, where the audit (docs/coverage.md) found no test through real
 * Baileys: the BUILT daemon (a child process; `npm run build` first) against the protocol double,
 * real WhatsApp media encryption on its HTTPS media host.
 * - multipart `send-media` takes `as` too: a voice note (PTT) and a sticker from a form, decrypted
 *   by the contact as such;
 * - `as: "document"` sends an image as a file (documentMessage with its name), not as a photo, and
 *   a JSON media send quotes with `replyTo`;
 * - a multipart status post names its audience with one `audience` field per person (OpenAPI's form
 *   encoding of an array): both people decrypt it. Before the fix only the first value of a repeated
 *   field was read, and a single `audience` field was "expected an array": a multipart status could
 *   not name an audience at all.
 */
import test from 'ava';
import { startGatewayOnDouble, type GatewayOnDouble } from '../protocol-double/child.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { STICKER_WEBP, VOICE_OGG } from '../fixtures/media/media.js';
import { waitFor } from '../helpers/daemon.js';

let gw: GatewayOnDouble;

test.before(async () => {
  gw = await startGatewayOnDouble({ config: { media: { maxBytes: 1024 * 1024 } } });
});

test.after.always(async () => {
  await gw?.close();
});

test.afterEach.always((t) => {
  if (gw.double.errors.length > 0) t.log(gw.double.errors);
  if (!t.passed) t.log(gw.output().slice(-6000));
});

function form(fields: Array<[string, string]>, file: { bytes: Buffer; type: string; name: string }): FormData {
  const f = new FormData();
  for (const [k, v] of fields) f.append(k, v);
  f.set('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  return f;
}

test.serial('multipart send-media takes as: a voice note and a sticker from a form; as document sends an image as a file, quoting with replyTo', async (t) => {
  const ana = await gw.double.contact('+15550620001', { name: 'Ana' });
  const voice = await gw.api('POST', '/send-media', { body: form([['phone', ana.phone], ['as', 'voice']], { bytes: VOICE_OGG, type: 'audio/ogg', name: 'note.ogg' }) });
  t.is(voice.status, 200, JSON.stringify(voice.body));
  const ptt = await ana.nextMessage();
  t.is(ptt.id, voice.body.messageId);
  t.true(ptt.message.audioMessage?.ptt, 'a voice note (PTT)');
  t.is(ptt.message.audioMessage?.mimetype, 'audio/ogg; codecs=opus');
  t.deepEqual(ana.download(ptt), VOICE_OGG);

  const sticker = await gw.api('POST', '/send-media', { body: form([['phone', ana.phone], ['as', 'sticker']], { bytes: STICKER_WEBP, type: 'image/webp', name: 's.webp' }) });
  t.is(sticker.status, 200, JSON.stringify(sticker.body));
  const got = await ana.nextMessage();
  t.is(got.message.stickerMessage?.mimetype, 'image/webp');
  t.deepEqual(ana.download(got), STICKER_WEBP);

  // A JSON media send can quote (replyTo) like a text: here Ana's question.
  const question = await ana.sendText(gw.double.accountJid(), 'Can you send the plan?');
  await gw.waitEvent('message.received', (e) => e.data.messageId === question);
  const png = randomPng(12);
  const file = await gw.api('POST', '/send-media', { json: { phone: ana.phone, base64: png.toString('base64'), fileName: 'plan.png', as: 'document', caption: 'the plan', replyTo: question } });
  t.is(file.status, 200, JSON.stringify(file.body));
  t.is(file.body.mediaType, 'document');
  const doc = await ana.nextMessage();
  t.falsy(doc.message.imageMessage, 'not a photo');
  t.like(doc.message.documentMessage, { fileName: 'plan.png', mimetype: 'image/png', caption: 'the plan' });
  t.like(doc.message.documentMessage?.contextInfo, { stanzaId: question, participant: ana.jid });
  t.deepEqual(ana.download(doc), png);
  t.deepEqual(gw.double.errors, []);
});

test.serial('a multipart status post names its audience with one audience field per person; both decrypt it', async (t) => {
  const [bo, cy] = await Promise.all([gw.double.contact('+15550620002', { name: 'Bo' }), gw.double.contact('+15550620003', { name: 'Cy' })]);
  const png = randomPng(16);
  const res = await gw.api('POST', '/status', { body: form([['caption', 'Two people see this'], ['audience', bo.phone], ['audience', `${cy.jid}`]], { bytes: png, type: 'image/png', name: 'story.png' }) });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { type: 'image', audience: 2 });
  for (const who of [bo, cy]) {
    const seen = await waitFor(async () => {
      const m = await who.nextMessage();
      return m.chat === 'status@broadcast' ? m : null;
    }, 15_000, `the status at ${who.phone}`);
    t.is(seen.id, res.body.messageId);
    t.is(seen.message.imageMessage?.caption, 'Two people see this');
    t.deepEqual(who.download(seen), png);
  }
  const audience = gw.double.accountSide.statusPosts.find((n) => n.attrs.id === res.body.messageId);
  t.truthy(audience, 'WhatsApp got the post');
  // One person alone is a list of one.
  const one = await gw.api('POST', '/status', { body: form([['audience', bo.phone]], { bytes: randomPng(8), type: 'image/png', name: 'one.png' }) });
  t.is(one.status, 200, JSON.stringify(one.body));
  t.is(one.body.audience, 1);
  t.deepEqual(gw.double.errors, []);
});
