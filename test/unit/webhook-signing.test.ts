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

test('keys kept for past secrets never sign for another: every secret right after many others', (t) => {
  const secrets = Array.from({ length: 1_500 }, () => `whsec_${randomBytes(32).toString('base64')}`);
  for (const secret of secrets) signPayload(secret, 'msg_a', 1, '{}');
  // The first ones were dropped from the kept keys, the last ones are still kept: both sign right.
  for (const secret of [secrets[0]!, secrets[700]!, secrets[1_499]!]) {
    t.is(signPayload(secret, 'msg_b', 2, '{"n":2}'), new Webhook(secret).sign('msg_b', new Date(2_000), '{"n":2}'));
  }
});
