/**
 * What one keepalive ping costs, queried (Baileys' `query`, as its own keepalive does) against sent
 * (`sendNode`, as the daemon's keepalive clock does since keep-socket-alive.ts stopped querying):
 * one real Baileys socket paired with the protocol double, in this process, 3,000 pings of each kind
 * in batches of 33 (one tick of the keepalive clock at 1,000 sessions), each kind waited out until
 * the double answered every ping, three rounds in turn. Prints the process' CPU a ping (the
 * double's share of it is the same for both kinds) and their ratio.
 *
 *   node --import=tsx bench/keepalive-ping.ts
 */
import '../test/protocol-double/preload.js';
import { DEFAULT_CONNECTION_CONFIG, initAuthCreds, makeWASocket, S_WHATSAPP_NET, type BinaryNode, type WASocket } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { ProtocolDouble } from '../test/protocol-double/index.js';
import { memoryKeys } from '../test/protocol-double/keys.js';
import { waitFor } from '../test/helpers/daemon.js';

DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;
const PINGS = 3000;
const BATCH = 33;
const logger = pino({ level: 'silent' });

const double = await ProtocolDouble.start();
const creds = initAuthCreds();
const keys = memoryKeys();
const socket = (): WASocket => {
  const sock = makeWASocket({ auth: { creds, keys }, logger, waWebSocketUrl: double.url, markOnlineOnConnect: false });
  sock.ev.on('creds.update', (u) => Object.assign(creds, u));
  return sock;
};
let qr: string | undefined;
socket().ev.on('connection.update', (u) => (qr = u.qr ?? qr));
await double.scan(await waitFor(() => qr, 10_000, 'a QR'));
await new Promise((r) => setTimeout(r, 500));
const sock = socket();
let open = false;
sock.ev.on('connection.update', (u) => (open ||= u.connection === 'open'));
await waitFor(() => open, 10_000, 'the login');
await new Promise((r) => setTimeout(r, 2000));

let answers = 0;
sock.ws.on('frame', (f: unknown) => {
  if (!(f instanceof Uint8Array) && (f as BinaryNode).tag === 'iq') answers += 1;
});
const ping = (): BinaryNode => ({ tag: 'iq', attrs: { id: sock.generateMessageTag(), to: S_WHATSAPP_NET, type: 'get', xmlns: 'w:p' }, content: [{ tag: 'ping', attrs: {} }] });

async function microsPerPing(kind: 'query' | 'send'): Promise<number> {
  const before = answers;
  const cpu = process.cpuUsage();
  for (let sent = 0; sent < PINGS; sent += BATCH) {
    const batch = Array.from({ length: BATCH }, () => (kind === 'query' ? sock.query(ping()) : sock.sendNode(ping())));
    await Promise.all(batch);
    await waitFor(() => answers - before >= sent + BATCH, 10_000, 'the answers');
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / PINGS;
}

for (let round = 1; round <= 3; round++) {
  const queried = await microsPerPing('query');
  const sent = await microsPerPing('send');
  console.log(`round ${round}: queried ${queried.toFixed(1)} us of CPU a ping, sent ${sent.toFixed(1)} us; sent/queried ${(sent / queried).toFixed(2)}`);
}
void sock.end(undefined);
process.exit(0);
