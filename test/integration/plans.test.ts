import test from 'ava';
import { DAY_MS } from '../../src/domain/clock.js';
import { ManualClock } from '../helpers/manual-time.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { fakeFactory } from '../helpers/fake-connection.js';

const msg = { phone: '+15551234567', message: 'hello' };

test('the first instance of an owner gets the trial exactly once, even when ten creates race', async (t) => {
  const fake = fakeFactory();
  const d = await startTestDaemon({ whatsapp: fake.factory });
  try {
    const results = await Promise.all(Array.from({ length: 10 }, () => d.request('POST', '/api/instances/create', { secret: d.secret, json: { owner: 'racer' } })));
    t.true(results.every((r) => r.status === 201));
    const premium = results.filter((r) => r.body.premium === true);
    t.is(premium.length, 1);
    t.is(premium[0]!.body.quotaRemaining, 'unlimited');
    t.truthy(premium[0]!.body.premiumUntil);
    t.true(results.filter((r) => r.body.premium === false).every((r) => r.body.quotaRemaining === '0' && r.body.premiumUntil === null));
  } finally {
    await d.close();
  }
});

test('30 concurrent sends against 10 credits: exactly 10 x 200 and 20 x 403', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox({ owner: 'o30', credits: 10 });
    const results = await Promise.all(Array.from({ length: 30 }, () => d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg })));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 403);
    t.is(ok.length, 10);
    t.is(refused.length, 20);
    t.true(refused.every((r) => r.body.error.code === 'QUOTA_EXHAUSTED'));
    t.deepEqual(ok.map((r) => r.body.quotaRemaining).sort((a, b) => Number(a) - Number(b)), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    const status = await d.request('GET', `/api/${inst.id}/status`, { key: inst.key });
    t.is(status.body.quotaRemaining, '0');
    const sent = await d.request('GET', `/api/${inst.id}/sandbox/sent`, { key: inst.key });
    t.is(sent.body.messages.length, 10);
  } finally {
    await d.close();
  }
});

test('a failed send costs nothing', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await d.createInstance({ sandbox: true, owner: 'of', credits: 2 });
    await new Promise((r) => setTimeout(r, 100));
    const notReady = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg });
    t.is(notReady.status, 503);
    const status = await d.request('GET', `/api/${inst.id}/status`, { key: inst.key });
    t.is(status.body.quotaRemaining, '2');
    // The refused send's reservation was released: both credits can still be spent.
    await d.request('POST', `/api/${inst.id}/sandbox/scan`, { key: inst.key });
    const sends = [];
    for (let i = 0; i < 3; i++) sends.push(await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg }));
    t.deepEqual(sends.map((r) => r.status), [200, 200, 403]);
    t.deepEqual(sends.slice(0, 2).map((r) => r.body.quotaRemaining), ['1', '0']);
  } finally {
    await d.close();
  }
});

test('premium expiry: requires_premium and PREMIUM_REQUIRED, then back with credits or premium', async (t) => {
  const clock = new ManualClock(Date.now());
  const d = await startTestDaemon({ clock });
  try {
    const inst = await d.connectedSandbox({ premiumDays: 30 });
    let status = await d.request('GET', `/api/${inst.id}/status`, { key: inst.key });
    t.is(status.body.status, 'connected');
    t.true(status.body.premium);
    t.is((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg })).body.quotaRemaining, 'unlimited');

    clock.advance(31 * DAY_MS);
    status = await d.request('GET', `/api/${inst.id}/status`, { key: inst.key });
    t.is(status.body.status, 'requires_premium');
    t.false(status.body.premium);
    t.is(status.body.quotaRemaining, '0');
    const refused = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg });
    t.is(refused.status, 403);
    t.is(refused.body.error.code, 'PREMIUM_REQUIRED');

    // credits from the CLI bring it back to its connection status
    const add = await runCli(['credits', 'add', inst.id, '2', '--json'], { dataDir: d.dataDir });
    t.is(add.code, 0, add.stderr);
    await new Promise((r) => setTimeout(r, 50));
    const sent = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg });
    t.is(sent.status, 200);
    t.is(sent.body.quotaRemaining, '1');
    status = await d.request('GET', `/api/${inst.id}/status`, { key: inst.key });
    t.is(status.body.status, 'connected');
  } finally {
    await d.close();
  }
});

test('per-instance send rate limit answers 429 with Retry-After past sendsPerMinute', async (t) => {
  const d = await startTestDaemon({ config: { rateLimit: { sendsPerMinute: 3 } } });
  try {
    const inst = await d.connectedSandbox({ premiumDays: 30 });
    const other = await d.connectedSandbox({ credits: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg })).status);
    t.deepEqual(statuses, [200, 200, 200, 429, 429]);
    const limited = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: msg });
    t.is(limited.body.error.code, 'RATE_LIMITED');
    t.true(Number(limited.headers.get('retry-after')) > 0);
    t.is((await d.request('POST', `/api/${other.id}/send`, { key: other.key, json: msg })).status, 200, 'the limit is per instance');
  } finally {
    await d.close();
  }
});

// Guards issue 21 item 17: a sandbox never takes the owner's one-time trial (contract part 3).
test('a sandbox instance never takes the trial: it starts with its credits, and the owner\'s first real instance still gets the trial', async (t) => {
  const fake = fakeFactory();
  const d = await startTestDaemon({ whatsapp: fake.factory });
  try {
    const sandbox = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true, owner: 'walker', credits: 10 } });
    t.is(sandbox.status, 201);
    t.false(sandbox.body.premium);
    t.is(sandbox.body.premiumUntil, null);
    t.is(sandbox.body.quotaRemaining, '10');
    const real = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { owner: 'walker' } });
    t.is(real.status, 201);
    t.true(real.body.premium, 'the first real instance gets the trial');
    t.is(real.body.quotaRemaining, 'unlimited');
    const second = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { owner: 'walker' } });
    t.false(second.body.premium, 'once');
  } finally {
    await d.close();
  }
});

test('credits past the supported maximum are a 400, not a 500', async (t) => {
  const d = await startTestDaemon({ config: { plans: { initialCredits: 999_999_999_999 } } });
  try {
    const res = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true, credits: 1_000_000_000_000 } });
    t.is(res.status, 400);
    t.is(res.body.error.code, 'INVALID_FIELD');
    t.regex(res.body.error.message, /balance above/);
    t.is((await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true } })).status, 201);
  } finally {
    await d.close();
  }
});
