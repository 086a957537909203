import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';

test('instance routes answer 401 for a missing key, a wrong key and an unknown id alike', async (t) => {
  const d = await startTestDaemon();
  try {
    const { id, key } = await d.createInstance();
    const other = await d.createInstance();
    const cases = [
      { path: `/api/${id}/status`, key: undefined },
      { path: `/api/${id}/status`, key: 'gw_live_wrong' },
      { path: `/api/${id}/status`, key: other.key },
      { path: `/api/inst_doesnotexist/status`, key },
      { path: `/api/__proto__/status`, key },
      { path: `/api/constructor/status`, key },
      { path: `/api/${'a'.repeat(5000)}/status`, key },
      { path: `/api/%00/status`, key },
      { path: `/api/..%2F..%2Fetc/status`, key },
    ];
    for (const c of cases) {
      const res = await d.request('GET', c.path, c.key === undefined ? {} : { key: c.key });
      t.is(res.status, 401, c.path.slice(0, 40));
      t.deepEqual(res.body, { success: false, error: { code: 'UNAUTHORIZED', message: 'missing or invalid X-API-Key for this instance' } });
    }
    t.is((await d.request('GET', `/api/${id}/status`, { key })).status, 200);
  } finally {
    await d.close();
  }
});

test('provisioning needs the server secret and refuses an instance key', async (t) => {
  const d = await startTestDaemon();
  try {
    const { key } = await d.createInstance();
    t.is((await d.request('POST', '/api/instances/create', { json: {} })).status, 401);
    t.is((await d.request('POST', '/api/instances/create', { secret: 'gw_secret_nope', json: {} })).status, 401);
    const withKey = await d.request('POST', '/api/instances/create', { key, json: {} });
    t.is(withKey.status, 401);
    t.is(withKey.body.error.code, 'UNAUTHORIZED');
    const withKeyAsSecret = await d.request('POST', '/api/instances/create', { secret: key, json: {} });
    t.is(withKeyAsSecret.status, 401);
  } finally {
    await d.close();
  }
});

test('repeated auth failures from one address get 429 with Retry-After; a valid key still passes', async (t) => {
  const d = await startTestDaemon({ config: { rateLimit: { authFailures: 3, authWindowMs: 60_000 } } });
  try {
    const { id, key } = await d.createInstance();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await d.request('GET', `/api/${id}/status`, { key: 'bad' })).status);
    t.deepEqual(statuses, [401, 401, 401, 429, 429]);
    const limited = await d.request('GET', `/api/${id}/status`, { key: 'bad' });
    t.is(limited.body.error.code, 'RATE_LIMITED');
    t.true(Number(limited.headers.get('retry-after')) >= 1);
    t.is((await d.request('GET', `/api/${id}/status`, { key })).status, 200, 'a valid key is never refused by the limiter');
    t.is((await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true } })).status, 201);
  } finally {
    await d.close();
  }
});
