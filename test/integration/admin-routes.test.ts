import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';

// Contract part 2 "Instance lifecycle": the reseller's server (server secret) lists, reads,
// deletes, re-keys and funds instances; an instance key logs out, restarts, pairs by code and
// rotates itself. Unknown ids here are 404: the secret holder may know which exist.

test('admin: paged list by owner, read, credits, premium, rotate-key, delete then 404', async (t) => {
  const d = await startTestDaemon();
  try {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await d.createInstance({ sandbox: true, owner: i % 2 ? 'odd' : 'even', name: `n${i}` })).id);
    const page1 = await d.request('GET', '/api/instances?limit=2', { secret: d.secret });
    t.is(page1.status, 200);
    t.deepEqual(page1.body.instances.map((i: { instanceId: string }) => i.instanceId), made.slice(0, 2));
    const page2 = await d.request('GET', `/api/instances?limit=2&cursor=${page1.body.nextCursor}`, { secret: d.secret });
    t.deepEqual(page2.body.instances.map((i: { instanceId: string }) => i.instanceId), made.slice(2, 4));
    const page3 = await d.request('GET', `/api/instances?limit=2&cursor=${page2.body.nextCursor}`, { secret: d.secret });
    t.is(page3.body.nextCursor, null);
    const odd = await d.request('GET', '/api/instances?owner=odd', { secret: d.secret });
    t.deepEqual(odd.body.instances.map((i: { name: string }) => i.name), ['n1', 'n3']);

    const id = made[3]!;
    const one = await d.request('GET', `/api/instances/${id}`, { secret: d.secret });
    t.like(one.body, { instanceId: id, owner: 'odd', sandbox: true, createdAt: one.body.createdAt });
    const credited = await d.request('POST', `/api/instances/${id}/credits`, { secret: d.secret, json: { add: 25 } });
    t.like(credited.body, { credits: 25 });
    const premium = await d.request('POST', `/api/instances/${id}/premium`, { secret: d.secret, json: { days: 10 } });
    t.true(premium.body.premium);
    const rotated = await d.request('POST', `/api/instances/${id}/rotate-key`, { secret: d.secret });
    t.regex(rotated.body.apiKey, /^gw_live_/);
    t.is((await d.request('GET', `/api/${id}/status`, { key: rotated.body.apiKey })).status, 200);

    const deleted = await d.request('DELETE', `/api/instances/${id}`, { secret: d.secret });
    t.like(deleted.body, { success: true, instanceId: id, deleted: true });
    t.is((await d.request('GET', `/api/instances/${id}`, { secret: d.secret })).status, 404);
    t.is((await d.request('DELETE', `/api/instances/${id}`, { secret: d.secret })).status, 404);
    t.is((await d.request('GET', `/api/${id}/status`, { key: rotated.body.apiKey })).status, 401);

    // Bad input and wrong credentials.
    t.is((await d.request('POST', `/api/instances/${made[0]}/credits`, { secret: d.secret, json: { add: 0 } })).body.error.code, 'INVALID_FIELD');
    t.is((await d.request('POST', `/api/instances/${made[0]}/premium`, { secret: d.secret, json: { days: 99_999_999 } })).body.error.code, 'INVALID_FIELD');
    t.is((await d.request('GET', '/api/instances?limit=1000', { secret: d.secret })).body.error.code, 'INVALID_FIELD');
    t.is((await d.request('GET', '/api/instances?cursor=bogus', { secret: d.secret })).body.error.code, 'INVALID_FIELD');
    t.is((await d.request('GET', '/api/instances', { key: 'gw_live_x' })).status, 401);
    t.is((await d.request('POST', `/api/instances/inst_doesnotexist/credits`, { secret: d.secret, json: { add: 1 } })).status, 404);
  } finally {
    await d.close();
  }
});

test('instance key: rotate-key stops the old key at once; logout shows a new QR; restart; pairing-code while connected is 409', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    const code = await d.request('POST', `/api/${inst.id}/pairing-code`, { key: inst.key, json: { phone: '+15551234567' } });
    t.is(code.status, 409);
    t.is(code.body.error.code, 'ALREADY_CONNECTED');
    const logout = await d.request('POST', `/api/${inst.id}/logout`, { key: inst.key });
    t.is(logout.status, 200);
    const qr = await (async () => {
      for (let i = 0; i < 50; i++) {
        const r = await d.request('GET', `/api/${inst.id}/qr-code`, { key: inst.key });
        if (r.status === 200) return r;
        await new Promise((res) => setTimeout(res, 20));
      }
      return null;
    })();
    t.truthy(qr, 'a new QR after logout');
    const paired = await d.request('POST', `/api/${inst.id}/pairing-code`, { key: inst.key, json: { phone: '+15551234567' } });
    t.regex(paired.body.code, /^[A-Z0-9]{8}$/);
    await d.request('POST', `/api/${inst.id}/sandbox/scan`, { key: inst.key });
    const restart = await d.request('POST', `/api/${inst.id}/restart`, { key: inst.key });
    t.is(restart.status, 200);
    const rotated = await d.request('POST', `/api/${inst.id}/rotate-key`, { key: inst.key });
    t.regex(rotated.body.apiKey, /^gw_live_/);
    t.is((await d.request('GET', `/api/${inst.id}/status`, { key: inst.key })).status, 401);
    t.is((await d.request('GET', `/api/${inst.id}/status`, { key: rotated.body.apiKey })).status, 200);
  } finally {
    await d.close();
  }
});
