import { createHmac, randomBytes } from 'node:crypto';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { signPayload, webhookHeaders } from '../../src/webhooks/signing.js';

test('signatures match the standardwebhooks reference signer for whsec_ secrets', (t) => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const body = JSON.stringify({ type: 'message.received', data: { text: 'héllo "quoted"' } });
  const ts = 1_767_225_600;
  t.is(signPayload(secret, 'msg_abc12345', ts, body), new Webhook(secret).sign('msg_abc12345', new Date(ts * 1000), body));
});

test('headers carry id and timestamp always, the signature only with a secret', (t) => {
  const plain = webhookHeaders({ id: 'msg_abc12345', timestampSeconds: 1, body: '{}', secret: null, userAgent: 'ua' });
  t.deepEqual(plain, { 'content-type': 'application/json', 'user-agent': 'ua', 'webhook-id': 'msg_abc12345', 'webhook-timestamp': '1' });
  const signed = webhookHeaders({ id: 'msg_abc12345', timestampSeconds: 1, body: '{}', secret: 's3cret', userAgent: 'ua' });
  t.regex(signed['webhook-signature'] ?? '', /^v1,/);
});

// Guards: signatures stay the Standard Webhooks bytes now that signing uses domain/hmac.ts and keeps
// decoded keys (a wrong byte here is every customer's verifier refusing every delivery).
test('signatures equal createHmac over key lengths around the block size, plain secrets and long bodies', (t) => {
  const reference = (key: Buffer, data: string): string => `v1,${createHmac('sha256', key).update(data).digest('base64')}`;
  for (const length of [1, 16, 32, 63, 64, 65, 100, 200]) {
    const raw = randomBytes(length);
    const secret = `whsec_${raw.toString('base64')}`;
    for (const body of ['{}', JSON.stringify({ text: 'é'.repeat(3_000) })]) {
      t.is(signPayload(secret, 'msg_x', 7, body), reference(raw, `msg_x.7.${body}`), `whsec_ key of ${length} bytes`);
    }
  }
  const plain = 'pässwörd with spaces';
  t.is(signPayload(plain, 'msg_y', 8, '{"a":1}'), reference(Buffer.from(plain, 'utf8'), 'msg_y.8.{"a":1}'));
  // `whsec_` with nothing decodable keys with the text itself, as before.
  t.is(signPayload('whsec_', 'msg_z', 9, '{}'), reference(Buffer.from('whsec_', 'utf8'), 'msg_z.9.{}'));
});

test('a key kept for the webhook that owns it follows its secret: rotated in place or in a new object, never the old one', (t) => {
  const webhook = { secret: `whsec_${randomBytes(32).toString('base64')}` };
  const sign = (w: { secret: string }): string => webhookHeaders({ id: 'msg_b', timestampSeconds: 2, body: '{"n":2}', secret: w.secret, keyOwner: w, userAgent: 'ua' })['webhook-signature']!;
  const reference = (secret: string): string => new Webhook(secret).sign('msg_b', new Date(2_000), '{"n":2}');
  t.is(sign(webhook), reference(webhook.secret));
  t.is(sign(webhook), reference(webhook.secret), 'the kept key signs the same');
  webhook.secret = `whsec_${randomBytes(32).toString('base64')}`;
  t.is(sign(webhook), reference(webhook.secret), 'a secret rotated in place: its new key');
  const rotated = { secret: 'a plain secret now' };
  t.is(sign(rotated), reference(Buffer.from(rotated.secret).toString('base64').replace(/^/, 'whsec_')), 'a new settings object: its own key');
  t.is(signPayload(webhook.secret, 'msg_b', 2, '{"n":2}'), reference(webhook.secret), 'and without an owner, the same bytes');
});
