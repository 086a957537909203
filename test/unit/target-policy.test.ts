import test from 'ava';
import { checkWebhookUrl, isPrivateAddress } from '../../src/webhooks/target-policy.js';

test('loopback, private, link-local, metadata and mapped forms are private', (t) => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe']) {
    t.true(isPrivateAddress(a), a);
  }
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.false(isPrivateAddress(a), a);
});

test('URLs are checked by scheme, credentials and every resolved address', async (t) => {
  await t.throwsAsync(checkWebhookUrl('ftp://example.com/', false), { message: /http/ });
  await t.throwsAsync(checkWebhookUrl('https://u:p@example.com/', false), { message: /credentials/ });
  await t.throwsAsync(checkWebhookUrl('http://[::127.0.0.1]/', false), { message: /webhooks\.allowPrivateTargets/ });
  await t.throwsAsync(checkWebhookUrl('https://hook.example/', false, async () => ['93.184.216.34', '10.0.0.5']), { message: /10\.0\.0\.5/ });
  await t.notThrowsAsync(checkWebhookUrl('https://hook.example/', false, async () => ['93.184.216.34']));
  await t.notThrowsAsync(checkWebhookUrl('http://127.0.0.1:9/', true));
});
