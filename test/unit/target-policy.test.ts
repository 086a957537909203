import test from 'ava';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedLookup } from '../../src/webhooks/guarded-lookup.js';
import { checkWebhookUrl, isPrivateAddress } from '../../src/webhooks/target-policy.js';

// Rule guarded: with webhooks.allowPrivateTargets false, only global unicast addresses are webhook
// targets; IPv6 forms that carry an IPv4 address are judged by that address.

/** Every one of these was wrongly accepted before ipaddr.js's range table replaced the hand-made list. */
const ONCE_ACCEPTED = [
  '::ffff:0:127.0.0.1', // IPv4-translated (RFC 6145) loopback
  '64:ff9b:1::7f00:1', // local-use NAT64 (RFC 8215)
  '2002:7f00:1::', // 6to4 of 127.0.0.1
  'fec0::1', // deprecated site-local
  '2001:db8::1', // IPv6 documentation
  '192.0.2.1', // TEST-NET-1
  '198.51.100.1', // TEST-NET-2
  '203.0.113.1', // TEST-NET-3
];

const NOT_GLOBAL = [
  '127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255',
  '224.0.0.1', '240.0.0.1', '198.18.0.1', '192.0.0.8', '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fd00::1', 'ff02::1',
  '::127.0.0.1', '::8.8.8.8', // IPv4-compatible (deprecated), wherever it points
  '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1',
  '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b::a9fe:a9fe', // NAT64 of loopback, private, metadata
  '64:ff9b:1::808:808', // local-use NAT64, even towards a public IPv4
  '2002:a00:1::1', '2002:c0a8:101::', // 6to4 of private addresses
  '2001:0:7f00:1::', // Teredo with a loopback server
  '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo whose client is 127.0.0.1 (stored inverted)
  '100::1', '2001:2::1', '2001:10::1', '3fff::1', '5f00::1', '4000::1', 'not-an-address', '',
];

const GLOBAL = [
  '8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8',
  '64:ff9b::808:808', // NAT64 of 8.8.8.8
  '2002:808:808::1', // 6to4 of 8.8.8.8
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo: server 65.54.227.120, client 8.8.8.8
];

test('addresses once accepted by mistake are refused', (t) => {
  for (const a of ONCE_ACCEPTED) t.true(isPrivateAddress(a), a);
});

test('every address that is not global unicast is refused, embedded IPv4 included', (t) => {
  for (const a of NOT_GLOBAL) t.true(isPrivateAddress(a), a);
});

test('global unicast addresses pass, also when embedded in an IPv6 form', (t) => {
  for (const a of GLOBAL) t.false(isPrivateAddress(a), a);
});

test('URLs are checked by scheme, credentials and every resolved address', async (t) => {
  await t.throwsAsync(checkWebhookUrl('ftp://example.com/', false), { message: /http/ });
  await t.throwsAsync(checkWebhookUrl('https://u:p@example.com/', false), { message: /credentials/ });
  await t.throwsAsync(checkWebhookUrl('http://[::127.0.0.1]/', false), { message: /webhooks\.allowPrivateTargets/ });
  await t.throwsAsync(checkWebhookUrl('https://hook.example/', false, async () => ['93.184.216.34', '10.0.0.5']), { message: /10\.0\.0\.5/ });
  await t.notThrowsAsync(checkWebhookUrl('https://hook.example/', false, async () => ['93.184.216.34']));
  await t.notThrowsAsync(checkWebhookUrl('http://127.0.0.1:9/', true));
});

test('URL literals of every once-accepted form are refused with the setting named', async (t) => {
  for (const a of ONCE_ACCEPTED) {
    const host = a.includes(':') ? `[${a}]` : a;
    await t.throwsAsync(checkWebhookUrl(`http://${host}/hook`, false), { message: /loopback\/private.*webhooks\.allowPrivateTargets/ }, a);
  }
  await t.notThrowsAsync(checkWebhookUrl('https://[2606:4700:4700::1111]/hook', false));
  await t.notThrowsAsync(checkWebhookUrl('https://8.8.8.8/hook', false));
});

test('a host resolving to any such address is refused at check time', async (t) => {
  for (const a of ONCE_ACCEPTED) {
    const err = await t.throwsAsync(checkWebhookUrl('https://hook.example/', false, async () => ['8.8.8.8', a]), undefined, a);
    t.true(err?.message.includes(`(${a})`), a);
    t.regex(err?.message ?? '', /webhooks\.allowPrivateTargets/);
  }
});

function lookupOnce(lookup: ReturnType<typeof guardedLookup>, host: string): Promise<{ err: NodeJS.ErrnoException | null; address: string }> {
  return new Promise((resolve) => lookup(host, { family: 0 }, (err, address) => resolve({ err, address: String(address) })));
}

test('the guarded lookup refuses a host whose resolver returns such addresses, and passes public ones', async (t) => {
  for (const a of [...ONCE_ACCEPTED, '127.0.0.1', '::ffff:127.0.0.1']) {
    const r = await lookupOnce(guardedLookup(async () => [a], false), 'hook.example');
    t.is(r.err?.code, 'EPRIVATETARGET', a);
    t.regex(r.err?.message ?? '', /webhooks\.allowPrivateTargets/, a);
  }
  const ok = await lookupOnce(guardedLookup(async () => ['8.8.8.8'], false), 'hook.example');
  t.is(ok.err, null);
  t.is(ok.address, '8.8.8.8');
  const allowed = await lookupOnce(guardedLookup(async () => ['192.0.2.1'], true), 'hook.example');
  t.is(allowed.address, '192.0.2.1', 'allowPrivateTargets lets it through');
});

/** A real HTTP request whose host name "resolves" to this machine's loopback through the guard. */
async function requestThroughGuard(server: Server, allowPrivate: boolean): Promise<{ status?: number; code?: string }> {
  const { port } = server.address() as AddressInfo;
  const lookup = guardedLookup(async () => ['127.0.0.1'], allowPrivate);
  return new Promise((resolve) => {
    const req = get({ host: 'hooks.example.test', port, path: '/hook', lookup, agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode });
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code }));
  });
}

test('over real HTTP the guarded lookup stops the connection before it is made', async (t) => {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    t.deepEqual(await requestThroughGuard(server, false), { code: 'EPRIVATETARGET' });
    t.is(hits, 0, 'the receiver never saw a request');
    t.deepEqual(await requestThroughGuard(server, true), { status: 200 });
    t.is(hits, 1);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
