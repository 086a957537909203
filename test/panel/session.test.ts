import test from 'ava';
import { ManualClock } from '../helpers/manual-time.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/** The panel's HTTP contract without a browser: cookie, CSRF, one error for every wrong credential, tenancy, headers. */

interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: Record<string, unknown>;
}

async function signIn(d: TestDaemon, body: unknown, headers: Record<string, string> = {}): Promise<Signed> {
  const res = await d.request('POST', '/panel/api/session', { json: body, headers });
  if (res.status !== 201) throw new Error(`sign-in ${res.status} ${JSON.stringify(res.body)}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0]!, csrf: res.body.csrfToken as string, setCookie, body: res.body };
}

test('sign-in sets an HttpOnly SameSite=Strict cookie (Secure behind TLS); writes need the CSRF token; sign-out ends it', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const admin = await signIn(d, { secret: d.secret });
  t.is(admin.body.role, 'admin');
  t.regex(admin.setCookie, /^gw_panel=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  t.notRegex(admin.setCookie, /Secure/);
  const tls = await signIn(d, { secret: d.secret }, { 'x-forwarded-proto': 'https' });
  t.regex(tls.setCookie, /; Secure$/);

  // Reads with the cookie alone; writes without the token are refused and change nothing.
  const list = await d.request('GET', '/api/instances', { headers: { cookie: admin.cookie } });
  t.is(list.status, 200);
  const noToken = await d.request('POST', '/api/instances/create', { headers: { cookie: admin.cookie }, json: { sandbox: true } });
  t.is(noToken.status, 401);
  t.regex(noToken.body.error.message, /CSRF/);
  const wrongToken = await d.request('POST', '/api/instances/create', { headers: { cookie: admin.cookie, 'x-csrf-token': tls.csrf }, json: { sandbox: true } });
  t.is(wrongToken.status, 401);
  t.is(d.core.instances.size, 0);
  const created = await d.request('POST', '/api/instances/create', { headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf }, json: { sandbox: true } });
  t.is(created.status, 201);

  // The session (and its token) can be read back after a reload; a cross-site sign-in is refused.
  const current = await d.request('GET', '/panel/api/session', { headers: { cookie: admin.cookie } });
  t.is(current.body.csrfToken, admin.csrf);
  const crossSite = await d.request('POST', '/panel/api/session', { json: { secret: d.secret }, headers: { origin: 'https://evil.example' } });
  t.is(crossSite.status, 401);

  const outNoToken = await d.request('DELETE', '/panel/api/session', { headers: { cookie: admin.cookie } });
  t.is(outNoToken.status, 401);
  const out = await d.request('DELETE', '/panel/api/session', { headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf } });
  t.is(out.status, 200);
  t.regex(out.headers.get('set-cookie') ?? '', /^gw_panel=; .*Max-Age=0/);
  t.is((await d.request('GET', '/api/instances', { headers: { cookie: admin.cookie } })).status, 401);
});

test('every wrong credential gets the same answer, counted by the auth limiter', async (t) => {
  const d = await startTestDaemon({ config: { rateLimit: { authFailures: 4 } } });
  t.teardown(() => d.close());
  const a = await d.createInstance();
  const answers = await Promise.all(
    [{ secret: 'nope' }, { instanceId: a.id, apiKey: 'wrong' }, { instanceId: 'inst_doesnotexist', apiKey: a.key }, {}].map((b) => d.request('POST', '/panel/api/session', { json: b })),
  );
  for (const r of answers) t.deepEqual([r.status, r.body], [401, { success: false, error: { code: 'UNAUTHORIZED', message: 'invalid credentials' } }]);
  t.is((await d.request('POST', '/panel/api/session', { json: { secret: 'nope' } })).status, 429);
});

test('an instance session sees its own instance only, and ends when its key is rotated', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const a = await d.createInstance();
  const b = await d.createInstance();
  const s = await signIn(d, { instanceId: a.id, apiKey: a.key });
  t.is(s.body.role, 'instance');
  t.is(s.body.instanceId, a.id);
  const h = { cookie: s.cookie, 'x-csrf-token': s.csrf };
  t.is((await d.request('GET', `/api/${a.id}/status`, { headers: h })).status, 200);
  t.is((await d.request('GET', `/api/${b.id}/status`, { headers: h })).status, 401);
  t.is((await d.request('GET', `/api/${b.id}/handovers`, { headers: h })).status, 401);
  t.is((await d.request('GET', '/api/instances', { headers: h })).status, 401);
  t.is((await d.request('POST', '/api/instances/create', { headers: h, json: { sandbox: true } })).status, 401);
  const rotated = await d.request('POST', `/api/${a.id}/rotate-key`, { headers: h });
  t.is(rotated.status, 200);
  t.is((await d.request('GET', `/api/${a.id}/status`, { headers: h })).status, 401, 'the session opened with the old key ended');
  t.is((await d.request('GET', `/api/${a.id}/status`, { key: a.key })).status, 401, 'the old key is refused');
  t.is((await d.request('GET', `/api/${a.id}/status`, { key: rotated.body.apiKey })).status, 200);
});

test('the front-end is served with a strict CSP and nosniff; panel.enabled false answers 404', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const index = await d.request('GET', '/panel/');
  t.is(index.status, 200);
  t.regex(index.headers.get('content-type') ?? '', /text\/html/);
  const csp = index.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'self'/);
  t.regex(csp, /script-src 'self'(;|$)/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe-inline|unsafe-eval/);
  t.is(index.headers.get('x-content-type-options'), 'nosniff');
  t.notRegex(String(index.body), /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  const asset = /src="(\/panel\/assets\/[^"]+\.js)"/.exec(String(index.body))?.[1];
  t.truthy(asset);
  const js = await d.request('GET', asset!);
  t.is(js.status, 200);
  t.regex(js.headers.get('content-type') ?? '', /javascript/);
  t.regex(js.headers.get('cache-control') ?? '', /immutable/);
  t.is((await d.request('GET', '/panel/assets/nope.js')).status, 404);
  const deep = await d.request('GET', '/panel/some/page');
  t.is(deep.status, 200, 'an unknown path is the app page');
  t.regex(String(deep.body), /<div id="root">/);
  t.notRegex(JSON.stringify((await d.request('GET', '/panel/%2e%2e/package.json')).body), /wa-gateway/, 'never a file outside the build');

  const off = await startTestDaemon({ config: { panel: { enabled: false } } });
  t.teardown(() => off.close());
  t.is((await off.request('GET', '/panel/')).status, 404);
  t.is((await off.request('POST', '/panel/api/session', { json: { secret: off.secret } })).status, 404);
});

const HOUR = 3_600_000;

test('a session ends after 12 h without activity; use keeps it alive; background refreshes do not', async (t) => {
  const clock = new ManualClock(Date.now());
  const d = await startTestDaemon({ clock });
  t.teardown(() => d.close());
  t.is(d.core.config.panel.sessionIdleMinutes, 720, 'the default idle time is 12 h');
  const s = await signIn(d, { secret: d.secret });
  const get = (headers: Record<string, string> = {}) => d.request('GET', '/api/instances', { headers: { cookie: s.cookie, ...headers } });

  // Used every 11 h 59 min: still signed in a day later.
  for (let i = 0; i < 2; i += 1) {
    clock.advance(12 * HOUR - 60_000);
    t.is((await get()).status, 200, `use ${i + 1}`);
  }
  // Only background refreshes (the panel's polling) for 12 h: the session ends.
  clock.advance(6 * HOUR);
  t.is((await get({ 'x-panel-background': '1' })).status, 200);
  t.is((await d.request('GET', '/panel/api/session', { headers: { cookie: s.cookie, 'x-panel-background': '1' } })).status, 200);
  clock.advance(6 * HOUR);
  t.is((await get()).status, 401, 'expired: 12 h since the last real use');
  const current = await d.request('GET', '/panel/api/session', { headers: { cookie: s.cookie } });
  t.is(current.status, 401);
  t.is(current.body.error.code, 'UNAUTHORIZED');
  // Signing in again works.
  const again = await signIn(d, { secret: d.secret });
  t.is((await d.request('GET', '/api/instances', { headers: { cookie: again.cookie } })).status, 200);
});

/** Opens a live event stream; resolves with a promise that settles when the server ends it. */
async function openStream(d: TestDaemon, id: string, cookie: string): Promise<{ ended: Promise<string>; abort: () => void }> {
  const ac = new AbortController();
  const res = await fetch(`${d.url}/api/${id}/events`, { headers: { cookie }, signal: ac.signal });
  if (res.status !== 200 || !res.body) throw new Error(`events ${res.status}`);
  const reader = res.body.getReader();
  const ended = (async () => {
    try {
      for (;;) if ((await reader.read()).done) return 'ended';
    } catch {
      return 'cut';
    }
  })();
  return { ended, abort: () => ac.abort() };
}

const settled = <T>(p: Promise<T>, ms: number): Promise<T | 'open'> => Promise.race([p, new Promise<'open'>((r) => setTimeout(() => r('open'), ms))]);

test('a live event stream opened with a session is cut when the session ends: sign-out, idle expiry, key rotation', async (t) => {
  const clock = new ManualClock(Date.now());
  const d = await startTestDaemon({ clock });
  t.teardown(() => d.close());
  const a = await d.createInstance();

  // Sign-out.
  const s1 = await signIn(d, { secret: d.secret });
  const st1 = await openStream(d, a.id, s1.cookie);
  t.is(await settled(st1.ended, 300), 'open');
  t.is((await d.request('DELETE', '/panel/api/session', { headers: { cookie: s1.cookie, 'x-csrf-token': s1.csrf } })).status, 200);
  t.not(await settled(st1.ended, 10_000), 'open', 'cut at sign-out');

  // Idle expiry: the stream is not activity; after 12 h the next request (or the sweep timer) cuts it.
  const s2 = await signIn(d, { secret: d.secret });
  const st2 = await openStream(d, a.id, s2.cookie);
  clock.advance(11 * HOUR);
  await d.request('GET', '/healthz');
  t.is(await settled(st2.ended, 300), 'open', 'still open before the idle time');
  clock.advance(HOUR);
  await d.request('GET', '/healthz');
  t.not(await settled(st2.ended, 10_000), 'open', 'cut at expiry');

  // The instance's key is rotated: a tenant session opened with it ends, and so does its stream.
  const s3 = await signIn(d, { instanceId: a.id, apiKey: a.key });
  const st3 = await openStream(d, a.id, s3.cookie);
  t.is(await settled(st3.ended, 300), 'open');
  t.is((await d.request('POST', `/api/${a.id}/rotate-key`, { key: a.key })).status, 200);
  await d.request('GET', '/healthz');
  t.not(await settled(st3.ended, 10_000), 'open', 'cut at rotation');

  // A stream of a live session stays open.
  const s4 = await signIn(d, { secret: d.secret });
  const st4 = await openStream(d, a.id, s4.cookie);
  await d.request('GET', '/healthz');
  t.is(await settled(st4.ended, 300), 'open');
  st4.abort();
});

// Guards issue 21 item 4: a tenant signed the admin out of the panel (1,050 instance sign-ins
// evicted the admin's session from a 1,000-session LRU). Sessions are bounded per principal.
test('1,050 instance sign-ins never end the admin\'s session; each principal keeps its 20 newest', async (t) => {
  const d = await startTestDaemon({ config: { rateLimit: { authFailures: 100_000 } } });
  t.teardown(() => d.close());
  const admin = await signIn(d, { secret: d.secret });
  const tenants = [await d.createInstance(), await d.createInstance()];
  const first: Signed[] = [];
  for (let i = 0; i < 1_050; i++) {
    const inst = tenants[i % 2]!;
    const s = await signIn(d, { instanceId: inst.id, apiKey: inst.key });
    if (i < 4) first.push(s);
  }
  t.is((await d.request('GET', '/api/instances', { headers: { cookie: admin.cookie } })).status, 200, 'the admin is still signed in');
  t.is((await d.request('GET', `/api/${tenants[0]!.id}/status`, { headers: { cookie: first[0]!.cookie } })).status, 401, 'a tenant\'s oldest session made way for its newest');
  t.true(d.core.instances.size === 2);
});
