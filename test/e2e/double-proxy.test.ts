/**
 * Guards issue 24, contract part 3 "Instance settings and proxy", the proxy: an instance's WhatsApp
 * socket and its media transfers go through its `proxy`, from the next connect on, with a real
 * HTTP CONNECT proxy (Debian's tinyproxy) and a real SOCKS5 proxy with authentication (Debian's
 * microsocks) on loopback between the built daemon and the protocol double: each proxy's own log
 * shows the WebSocket's tunnel to the double and the tunnels to its media host (a received image
 * downloaded, a sent one uploaded). A proxy that refuses (wrong SOCKS credentials, 407 or 401
 * from an HTTP proxy, nothing listening) becomes the status reason `proxy refused: <cause>` and is retried
 * like any network failure, never a crash; without the proxy the instance connects again.
 * Needs `npm run build` first, and tinyproxy and microsocks (skipped without them, except under
 * CI=true, where .ci/run installs them).
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startGatewayOnDouble, type GatewayOnDouble } from '../protocol-double/child.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { waitFor } from '../helpers/daemon.js';
import { freePort, proxiesRun, proxySerial as serial, startMicrosocks, startTinyproxy, type RealProxy } from '../helpers/proxies.js';

let gw: GatewayOnDouble;
const proxies: RealProxy[] = [];

test.before(async () => {
  // An instance key may set its proxy here (the server secret always may: see settings-routes).
  if (proxiesRun) gw = await startGatewayOnDouble({ config: { instances: { tenantsMayProxy: true } } });
});

test.after.always(async () => {
  await gw?.close();
  for (const p of proxies) await p.close();
});

/** The double's WebSocket as host:port. */
const doubleTarget = (): string => new URL(gw.double.url).host;

async function useProxy(proxy: string | null): Promise<void> {
  const set = await gw.api('PUT', '/settings', { json: { proxy } });
  if (set.status !== 200) throw new Error(`PUT /settings: ${set.status} ${JSON.stringify(set.body)}`);
  const restart = await gw.api('POST', '/restart');
  if (restart.status !== 200) throw new Error(`POST /restart: ${restart.status} ${JSON.stringify(restart.body)}`);
}

const status = async (): Promise<{ status: string; reason: string | null }> => (await gw.api('GET', '/status')).body as { status: string; reason: string | null };
const connected = () => waitFor(async () => ((await status()).status === 'connected' ? true : undefined), 20_000, 'connected');

/** A contact sends an image; the gateway downloads it (through the proxy) and serves it byte for byte. */
async function receiveImage(phone: string): Promise<void> {
  const contact = await gw.double.contact(phone);
  const bytes = randomPng(32);
  const id = await contact.sendImage(gw.double.accountJid(), bytes, { caption: 'via the proxy' });
  const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === id);
  if (ev.data.media?.url === null || ev.data.media?.url === undefined) throw new Error(`no media url: ${JSON.stringify(ev.data)}; daemon output:\n${gw.output().slice(-3000)}`);
  const media = await fetch(`${gw.daemon.url}${ev.data.media.url as string}`, { headers: { 'x-api-key': gw.key } });
  if (!Buffer.from(await media.arrayBuffer()).equals(bytes)) throw new Error('the served media differs from what the contact sent');
}

serial('HTTP CONNECT (tinyproxy): after a restart the WebSocket, a media download and a media upload go through the proxy', async (t) => {
  const tiny = await startTinyproxy();
  proxies.push(tiny);
  t.is(tiny.tunnelsTo(doubleTarget()), 0);
  await useProxy(tiny.url);
  await connected();
  t.true(tiny.tunnelsTo(doubleTarget()) >= 1, `the WebSocket went through tinyproxy:\n${tiny.log()}`);

  const media = gw.double.media.hostname;
  t.is(tiny.tunnelsTo(media), 0);
  await receiveImage('+15550500001');
  const afterDownload = tiny.tunnelsTo(media);
  t.true(afterDownload >= 1, `the media download went through tinyproxy:\n${tiny.log()}`);

  const dana = await gw.double.contact('+15550500002');
  const bytes = randomPng(24);
  const form = new FormData();
  form.set('phone', dana.phone);
  form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'p.png');
  const sent = await gw.api('POST', '/send-media', { body: form });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  t.true(dana.download(await dana.nextMessage()).equals(bytes));
  t.true(tiny.tunnelsTo(media) > afterDownload, 'the upload went through tinyproxy too');
  t.deepEqual(gw.double.errors, []);
});

serial('SOCKS5 with a user and password (microsocks): the WebSocket and a media download go through it', async (t) => {
  const password = randomBytes(9).toString('base64url');
  const socks = await startMicrosocks({ auth: { user: 'gateway', password } });
  proxies.push(socks);
  await useProxy(`socks5://gateway:${password}@127.0.0.1:${socks.port}`);
  await connected();
  t.true(socks.tunnelsTo(doubleTarget()) >= 1, `the WebSocket went through microsocks:\n${socks.log()}`);
  t.is((await gw.api('GET', '/settings')).body.proxy, `socks5://***@127.0.0.1:${socks.port}`);
  await receiveImage('+15550500003');
  t.true(socks.tunnelsTo(gw.double.media.hostname) >= 1, `the media download went through microsocks:\n${socks.log()}`);
  t.false(gw.output().includes(password), 'the proxy password is in no log line');
  t.deepEqual(gw.double.errors, []);
});

serial('a proxy that refuses is the status reason "proxy refused: ...", retried like any network failure; the daemon lives on and connects again without it', async (t) => {
  const socks = await startMicrosocks({ auth: { user: 'gateway', password: 'right-one' } });
  const tiny = await startTinyproxy({ auth: { user: 'gateway', password: 'right-one' } });
  proxies.push(socks, tiny);
  const closed = await freePort();
  const cases: Array<[string, RegExp]> = [
    [`socks5://gateway:wrong@127.0.0.1:${socks.port}`, /^proxy refused: .*[Aa]uthentication failed/],
    // tinyproxy answers 407 to a CONNECT without credentials, 401 to wrong ones.
    [`http://127.0.0.1:${tiny.port}`, /^proxy refused: HTTP 407 Proxy Authentication Required\b/],
    [`http://gateway:wrong@127.0.0.1:${tiny.port}`, /^proxy refused: HTTP 401\b/],
    [`http://127.0.0.1:${closed}`, new RegExp(`^proxy refused: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}`)],
  ];
  for (const [proxy, refusal] of cases) {
    const seen = gw.events('instance.status').length;
    await useProxy(proxy);
    // The first close says so and names the retry; after the last retry the give-up names it as the last cause.
    const first = await gw
      .waitEvent('instance.status', (e) => gw.events('instance.status').indexOf(e) >= seen && e.data.to === 'disconnected' && refusal.test(e.data.reason ?? ''))
      .catch((err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(gw.events('instance.status').slice(seen).map((e) => e.data))}`);
      });
    t.regex(first.data.reason as string, /; retry 1 of \d+ in \d+ s$/, proxy.replace(/:[^:@/]*@/, ':***@'));
    const gaveUp = await waitFor(async () => {
      const s = await status();
      return /^gave up after \d+ failed reconnects \(last: proxy refused: /.test(s.reason ?? '') ? s : undefined;
    }, 20_000, 'the give-up');
    t.is(gaveUp.status, 'disconnected');
  }
  t.true(tiny.tunnelsTo(doubleTarget()) >= 1, 'tinyproxy was asked (and said 407)');
  t.is(gw.daemon.child.exitCode, null, 'the daemon did not crash');
  await useProxy(null);
  await connected();
  t.deepEqual(gw.double.errors, []);
});
