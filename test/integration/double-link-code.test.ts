import '../protocol-double/preload.js';
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { aesDecryptCTR, aesEncryptCTR, DEFAULT_CONNECTION_CONFIG, derivePairingCodeKey, initAuthCreds, type BinaryNode, makeWASocket, type AuthenticationCreds, type ConnectionState, type SignalKeyStore, type WASocket } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { installCurveVerify } from '../../src/connection/baileys/curve-verify.js';
import { ProtocolDouble } from '../protocol-double/index.js';
import { LINK_CODE_TTL_MS, LinkCodeError, unwrapWithCode, wrapWithCode } from '../protocol-double/link-code.js';
import { memoryKeys } from '../protocol-double/keys.js';
import { waitFor } from '../helpers/daemon.js';

// The double's link-code side (test/protocol-double/link-code.ts) against bare Baileys sockets
// (issue 24: "extend the double: link-code pairing"): what Baileys' requestPairingCode and its
// link_code_companion_reg handler expect of WhatsApp, independently of the gateway. The built
// daemon's route is covered by test/e2e/double-pairing-code.test.ts.

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;
installCurveVerify();
const logger = pino({ level: process.env.PROTOCOL_DOUBLE_DEBUG === '1' ? 'debug' : 'silent' });

interface Client {
  sock: WASocket;
  updates: Partial<ConnectionState>[];
  closed: Promise<number | undefined>;
}

function connect(double: ProtocolDouble, creds: AuthenticationCreds, keys: SignalKeyStore): Client {
  const sock = makeWASocket({ auth: { creds, keys }, logger, waWebSocketUrl: double.url, markOnlineOnConnect: false });
  const updates: Partial<ConnectionState>[] = [];
  const closed = new Promise<number | undefined>((resolve) => {
    sock.ev.on('connection.update', (u) => {
      updates.push(u);
      if (u.connection === 'close') resolve((u.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode);
    });
  });
  sock.ev.on('creds.update', (u) => Object.assign(creds, u));
  return { sock, updates, closed };
}

const qrShown = (c: Client): boolean => c.updates.some((u) => u.qr);
const isOpen = (c: Client): boolean => c.updates.some((u) => u.connection === 'open');

test.serial('a code typed on the phone pairs: companion_hello, primary_hello, companion_finish, pair-success, 515, login', async (t) => {
  const double = await ProtocolDouble.start();
  const creds = initAuthCreds();
  const keys = memoryKeys();
  try {
    const first = connect(double, creds, keys);
    await waitFor(() => qrShown(first), 5000, 'a QR');
    const code = await first.sock.requestPairingCode('15550000001');
    const asked = await double.linkCode.nextRequest('+15550000001');
    t.like(asked, { phone: '+15550000001', state: 'pending', pushNotification: true, platformDisplay: 'Chrome (Mac OS)' });
    t.is(asked.session, double.last()!);

    const device = await double.enterCode(code.toLowerCase().replace(/^(.{4})/, '$1-'));
    t.is(await first.closed, 515);
    t.is(creds.me?.id, device.jid);
    t.truthy(creds.account, 'Baileys checked the pair-success HMAC with the adv secret both sides derived');
    t.like(asked, { state: 'linked' });

    const second = connect(double, creds, keys);
    await waitFor(() => isOpen(second), 5000, 'open after the restart');
    t.is(double.last()?.device, device);
    second.sock.end(undefined);
    t.deepEqual(double.errors, []);
  } finally {
    await double.close();
  }
});

test.serial("a wrong code: the phone cannot open the companion's bundle, nothing reaches Baileys, the socket stays unpaired; retyping the right code pairs", async (t) => {
  const double = await ProtocolDouble.start();
  const creds = initAuthCreds();
  const keys = memoryKeys();
  try {
    const first = connect(double, creds, keys);
    await waitFor(() => qrShown(first), 5000, 'a QR');
    const code = await first.sock.requestPairingCode('15550000001');
    await double.linkCode.nextRequest('+15550000001');
    const wrong = code === '23456789' ? '23456788' : '23456789';
    const err = await t.throwsAsync(double.enterCode(wrong), { instanceOf: LinkCodeError });
    t.regex(err.message, /the key bundle does not open/);
    // Baileys sent its companion_finish (the key exchange ran) and got no pair-success.
    t.true(double.last()!.received.some((n) => JSON.stringify(n).includes('companion_finish')));
    t.falsy(creds.account);
    t.false(first.updates.some((u) => u.isNewLogin || u.connection === 'close'));
    t.is(double.devices.size, 0);

    await double.enterCode(code);
    t.is(await first.closed, 515);
    t.truthy(creds.account);
    t.deepEqual(double.linkCode.requests[0]!.attempts.map((a) => a.outcome), ['failed', 'linked']);
  } finally {
    await double.close();
  }
});

test.serial('refusals: a number without a phone gets 400 bad-request; no request, an expired one, a malformed code are refused by the phone', async (t) => {
  const double = await ProtocolDouble.start();
  const creds = initAuthCreds();
  const keys = memoryKeys();
  try {
    const first = connect(double, creds, keys);
    await waitFor(() => qrShown(first), 5000, 'a QR');
    await t.throwsAsync(double.enterCode('ABCD2345'), { instanceOf: LinkCodeError, message: /no device is waiting for a code for \+15550000001/ });

    const frames: BinaryNode[] = [];
    first.sock.ws.on('frame', (f: BinaryNode) => frames.push(f));
    // Baileys does not wait for the answer: it hands out a code regardless (the gateway waits, see pairing-code.ts).
    await first.sock.requestPairingCode('15559990001');
    const refusal = await waitFor(() => frames.find((f) => f.tag === 'iq' && f.attrs.type === 'error'), 5000, 'the refusal');
    t.deepEqual((refusal.content as BinaryNode[])[0]!.attrs, { code: '400', text: 'bad-request' });
    t.like(double.linkCode.refused[0], { phone: '+15559990001', reason: 'no WhatsApp account (no phone) for this number' });
    t.is(double.linkCode.requests.length, 0);

    const code = await first.sock.requestPairingCode('15550000001');
    const asked = await double.linkCode.nextRequest('+15550000001');
    await t.throwsAsync(double.enterCode(code.slice(0, 7)), { instanceOf: LinkCodeError, message: /8 characters/ });
    await t.throwsAsync(double.enterCode(`${code.slice(0, 7)}0`), { instanceOf: LinkCodeError, message: /8 characters/ });
    asked.at -= LINK_CODE_TTL_MS + 1;
    await t.throwsAsync(double.enterCode(code), { instanceOf: LinkCodeError, message: /expired/ });
    t.deepEqual(asked.attempts, []);
    first.sock.end(undefined);
    t.deepEqual(double.errors, []);
  } finally {
    await double.close();
  }
});

test("the double's code wrapping and Baileys' are the same: AES-256-CTR under PBKDF2-SHA256 (131072 rounds) of the code", async (t) => {
  const key = Buffer.from(initAuthCreds().pairingEphemeralKeyPair.public);
  const wrapped = await wrapWithCode('ABCD2345', key);
  t.is(wrapped.length, 80);
  // What Baileys' decipherLinkPublicKey does with the phone's primary_hello.
  const baileysKey = await derivePairingCodeKey('ABCD2345', wrapped.subarray(0, 32));
  t.deepEqual(aesDecryptCTR(wrapped.subarray(48, 80), baileysKey, wrapped.subarray(32, 48)), key);
  // And the other way: what Baileys' companion_hello carries, unwrapped by the phone.
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const fromBaileys = Buffer.concat([salt, iv, aesEncryptCTR(key, await derivePairingCodeKey('ABCD2345', salt), iv)]);
  t.deepEqual(await unwrapWithCode('ABCD2345', fromBaileys), key);
  t.notDeepEqual(await unwrapWithCode('ABCD2346', fromBaileys), key, 'no integrity: a wrong code unwraps to other bytes');
});
