import { randomBytes } from 'node:crypto';
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
