import test from 'ava';
import { defaultConfig, validateConfig } from '../../src/config/validate.js';
import { GatewayError } from '../../src/domain/errors.js';

test('an empty object takes every default', (t) => {
  t.deepEqual(validateConfig({}), defaultConfig());
});

test('defaults match DESIGN.md', (t) => {
  const c = defaultConfig();
  t.is(c.host, '127.0.0.1');
  t.is(c.port, 8080);
  t.is(c.media.maxBytes, 16 * 1024 * 1024);
  t.is(c.plans.trialDays, 30);
  t.is(c.plans.initialCredits, 0);
  t.false(c.webhooks.allowPrivateTargets);
  t.is(c.webhooks.retryDelaysMs.length, 6);
});

test('partial sections merge over defaults', (t) => {
  const c = validateConfig({ webhooks: { timeoutMs: 2000 } });
  t.is(c.webhooks.timeoutMs, 2000);
  t.deepEqual(c.webhooks.retryDelaysMs, defaultConfig().webhooks.retryDelaysMs);
});

test('unknown keys are rejected with their path', (t) => {
  const err = t.throws(() => validateConfig({ webhooks: { timeoutMS: 5 } }, 'config.json'), { instanceOf: GatewayError });
  t.regex(err.message, /config\.json: webhooks\.timeoutMS: unknown key/);
});

test('wrong types are rejected with their path', (t) => {
  const err = t.throws(() => validateConfig({ port: '8080', webhooks: { retryDelaysMs: [1000, 'x'] } }));
  t.regex(err.message, /port: expected a whole number/);
  t.regex(err.message, /webhooks\.retryDelaysMs\[1\]: expected a whole number/);
});

test('a section that is not an object is rejected', (t) => {
  t.throws(() => validateConfig({ media: 5 }), { message: /media: expected an object/ });
  t.throws(() => validateConfig([]), { message: /config: expected a JSON object/ });
});

test('enums and nullable values are checked', (t) => {
  t.throws(() => validateConfig({ logLevel: 'loud' }), { message: /logLevel: expected one of/ });
  t.throws(() => validateConfig({ baileys: { webSocketUrl: 'http://x' } }), { message: /baileys\.webSocketUrl/ });
  t.is(validateConfig({ baileys: { webSocketUrl: 'ws://127.0.0.1:1/ws/chat' } }).baileys.webSocketUrl, 'ws://127.0.0.1:1/ws/chat');
  t.throws(() => validateConfig({ serverSecretHash: 'plain' }), { message: /serverSecretHash/ });
});
