/**
 * Guards issue 24, contract part 3 "Instance settings and proxy", the routes: GET|PUT
 * /api/{id}/settings (instance key) and /api/instances/{id}/settings (server secret) answer every
 * setting with its default; PUT takes any subset (`calls` field by field), refuses unknown fields
 * and bad values (400 naming the field); `proxy` is http://, https:// or socks5:// with a host,
 * never shown back with its user and password (`socks5://***@host:1080`), kept in the 0600
 * instances file; an instance key setting it is 403 PROXY_NOT_ALLOWED unless
 * `instances.tenantsMayProxy`, and putting back what GET showed is no change. Every answer, errors
 * included, matches /openapi.json.
 */
import test from 'ava';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestDaemon } from '../helpers/daemon.js';
import { documentChecker } from '../helpers/document-check.js';

const DEFAULTS = { calls: { autoReject: false }, alwaysOnline: false, autoRead: false, ignoreGroups: false, ignoreStatus: false, syncFullHistory: false, proxy: null };

test('a new instance has every default, under both routes; an unknown id is 404 for the admin', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.createInstance({ sandbox: true });
  const own = await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key });
  t.is(own.status, 200, JSON.stringify(own.body));
  t.deepEqual(own.body, { success: true, instanceId: inst.id, ...DEFAULTS });
  const admin = await d.request('GET', `/api/instances/${inst.id}/settings`, { secret: d.secret });
  t.deepEqual(admin.body, own.body);
  t.is((await d.request('GET', `/api/instances/inst_nothere0000/settings`, { secret: d.secret })).body.error?.code, 'NOT_FOUND');
  t.is((await d.request('PUT', `/api/instances/inst_nothere0000/settings`, { secret: d.secret, json: { autoRead: true } })).body.error?.code, 'NOT_FOUND');
  t.is((await d.request('GET', `/api/${inst.id}/settings`)).status, 401);
  t.is((await d.request('GET', `/api/instances/${inst.id}/settings`, { key: inst.key })).status, 401, 'the admin route wants the secret');
});

test('PUT takes any subset: what it leaves out keeps its value, calls merges field by field, rejectMessage null removes it', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.createInstance({ sandbox: true });
  const put = (json: unknown) => d.request('PUT', `/api/${inst.id}/settings`, { key: inst.key, json });
  const first = await put({ autoRead: true, calls: { autoReject: true, rejectMessage: 'Please write instead.' } });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.deepEqual(first.body, { success: true, instanceId: inst.id, ...DEFAULTS, autoRead: true, calls: { autoReject: true, rejectMessage: 'Please write instead.' } });
  const second = await put({ ignoreGroups: true, calls: { autoReject: false } });
  t.deepEqual(second.body.calls, { autoReject: false, rejectMessage: 'Please write instead.' });
  t.true(second.body.autoRead, 'left out: kept');
  t.true(second.body.ignoreGroups);
  const third = await put({ calls: { rejectMessage: null }, alwaysOnline: true, ignoreStatus: true, syncFullHistory: true });
  t.deepEqual(third.body, { success: true, instanceId: inst.id, calls: { autoReject: false }, alwaysOnline: true, autoRead: true, ignoreGroups: true, ignoreStatus: true, syncFullHistory: true, proxy: null });
  t.deepEqual((await put({})).body, third.body, 'an empty PUT changes nothing');
  t.deepEqual((await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key })).body, third.body);
});

test('unknown fields and wrong types are 400 naming the field; nothing is stored', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.createInstance({ sandbox: true });
  const put = (json: unknown) => d.request('PUT', `/api/${inst.id}/settings`, { key: inst.key, json });
  for (const [body, field] of [
    [{ autoReadd: true }, 'autoReadd'],
    [{ calls: { autoReject: true, ring: false } }, 'calls.ring'],
    [{ autoRead: 'yes' }, 'autoRead'],
    [{ calls: { rejectMessage: '' } }, 'calls.rejectMessage'],
    [{ proxy: 5 }, 'proxy'],
  ] as const) {
    const res = await put(body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'INVALID_FIELD', JSON.stringify(body));
    t.true((res.body.error.message as string).startsWith(field), `${JSON.stringify(body)}: ${res.body.error.message as string}`);
  }
  t.deepEqual((await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key })).body, { success: true, instanceId: inst.id, ...DEFAULTS });
});

test('proxy: only http, https and socks5 URLs with a host (400 naming proxy, the URL not repeated); shown without user and password; kept whole in the 0600 instances file', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.createInstance({ sandbox: true });
  const admin = (json: unknown) => d.request('PUT', `/api/instances/${inst.id}/settings`, { secret: d.secret, json });
  for (const bad of ['ftp://proxy.example.com:21', 'socks4://proxy.example.com:1080', 'socks5h://proxy.example.com', 'http://', 'proxy.example.com:8080', 'http://u:s3cretpw@proxy.example.com/path', 'http://proxy.example.com?x=1', 'not a url at all']) {
    const res = await admin({ proxy: bad });
    t.is(res.status, 400, bad);
    t.is(res.body.error.code, 'INVALID_FIELD', bad);
    t.regex(res.body.error.message as string, /^proxy: /, bad);
    t.false((res.body.error.message as string).includes('s3cretpw'), 'the password is not repeated');
  }
  const set = await admin({ proxy: 'socks5://gw-user:s3cret%40pw@proxy.example.com:1080' });
  t.is(set.status, 200, JSON.stringify(set.body));
  t.is(set.body.proxy, 'socks5://***@proxy.example.com:1080');
  t.is((await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key })).body.proxy, 'socks5://***@proxy.example.com:1080');
  const file = join(d.dataDir, 'instances.json');
  t.true((await readFile(file, 'utf8')).includes('socks5://gw-user:s3cret%40pw@proxy.example.com:1080'), 'stored with its credentials');
  t.is((await stat(file)).mode & 0o777, 0o600);

  t.is((await admin({ proxy: 'http://proxy.example.com:3128' })).body.proxy, 'http://proxy.example.com:3128', 'no credentials: shown as it is');
  t.is((await admin({ proxy: 'https://u:p@proxy.example.com' })).body.proxy, 'https://***@proxy.example.com');
  t.is((await admin({ proxy: null })).body.proxy, null);
});

test('an instance key may not set the proxy (403 PROXY_NOT_ALLOWED, nothing stored), but may put back what GET shows; with instances.tenantsMayProxy it may', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.createInstance({ sandbox: true });
  const own = (json: unknown) => d.request('PUT', `/api/${inst.id}/settings`, { key: inst.key, json });
  const refused = await own({ proxy: 'http://proxy.example.com:3128', autoRead: true });
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'PROXY_NOT_ALLOWED');
  t.deepEqual((await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key })).body, { success: true, instanceId: inst.id, ...DEFAULTS }, 'nothing of the PUT was stored');

  await d.request('PUT', `/api/instances/${inst.id}/settings`, { secret: d.secret, json: { proxy: 'socks5://user:pw@proxy.example.com:1080' } });
  const read = (await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key })).body as Record<string, unknown>;
  const { success: _s, instanceId: _i, ...settings } = read;
  const echoed = await own({ ...settings, autoRead: true });
  t.is(echoed.status, 200, 'the proxy GET showed is no change');
  t.true(echoed.body.autoRead);
  t.is(echoed.body.proxy, 'socks5://***@proxy.example.com:1080');
  t.true((await readFile(join(d.dataDir, 'instances.json'), 'utf8')).includes('socks5://user:pw@proxy.example.com:1080'), 'the stored credentials are kept');
  t.is((await own({ proxy: null })).body.error?.code, 'PROXY_NOT_ALLOWED', 'removing it is setting it');

  const open = await startTestDaemon({ config: { instances: { tenantsMayProxy: true } } });
  t.teardown(() => open.close());
  const other = await open.createInstance({ sandbox: true });
  const allowed = await open.request('PUT', `/api/${other.id}/settings`, { key: other.key, json: { proxy: 'http://u:p@proxy.example.com:3128' } });
  t.is(allowed.status, 200, JSON.stringify(allowed.body));
  t.is(allowed.body.proxy, 'http://***@proxy.example.com:3128');
});

test('answers of the settings routes, errors included, match /openapi.json', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const check = await documentChecker(d);
  const inst = await d.createInstance({ sandbox: true });
  const calls: Array<[string, string, string, { key?: string; secret?: string; json?: unknown }, number]> = [
    ['GET', `/api/${inst.id}/settings`, '/api/{id}/settings', { key: inst.key }, 200],
    ['PUT', `/api/${inst.id}/settings`, '/api/{id}/settings', { key: inst.key, json: { calls: { autoReject: true, rejectMessage: 'Write, please.' }, autoRead: true } }, 200],
    ['PUT', `/api/${inst.id}/settings`, '/api/{id}/settings', { key: inst.key, json: { proxy: 'http://proxy.example.com:3128' } }, 403],
    ['PUT', `/api/${inst.id}/settings`, '/api/{id}/settings', { key: inst.key, json: { nope: true } }, 400],
    ['PUT', `/api/instances/${inst.id}/settings`, '/api/instances/{id}/settings', { secret: d.secret, json: { proxy: 'socks5://u:p@proxy.example.com:1080' } }, 200],
    ['GET', `/api/instances/${inst.id}/settings`, '/api/instances/{id}/settings', { secret: d.secret }, 200],
    ['GET', '/api/instances/inst_nothere0000/settings', '/api/instances/{id}/settings', { secret: d.secret }, 404],
    ['PUT', `/api/instances/${inst.id}/settings`, '/api/instances/{id}/settings', { secret: d.secret, json: { proxy: 'gopher://x' } }, 400],
  ];
  for (const [method, path, template, options, status] of calls) {
    const res = await d.request(method, path, options);
    t.is(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    t.is(check(res, template, method), null);
  }
});
