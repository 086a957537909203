/**
 * The webhook receiver, in its own process (a client's receiver never shares the gateway's or the
 * load generator's event loop), driven over IPC by bench/lib.ts `startReceiver`.
 *
 * It does what a client's receiver must: reads the whole body, verifies the Standard Webhooks
 * signature when given a secret (argv[2]), parses the JSON, answers 200. It counts
 * `message.received` events: first and last receipt (wall clock, so the bench can start the clock
 * at the load generator's first accepted call), distinct texts and their order of first receipt,
 * and for texts `chat:n:sentAtMs` the latency from the client's call to receipt.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { ReceiverStats } from './lib.js';

const secret = process.argv[2] || null;
// `whsec_<base64>` keys with the decoded bytes, as the standardwebhooks verifier does.
const key = secret === null ? null : secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');

let received = 0;
let firstAt = 0;
let lastAt = 0;
let badSignatures = 0;
let latencies: number[] = [];
let seen = new Map<string, number>();

function verified(headers: Record<string, string | string[] | undefined>, body: string): boolean {
  if (key === null) return true;
  const expected = `v1,${createHmac('sha256', key).update(`${String(headers['webhook-id'])}.${String(headers['webhook-timestamp'])}.${body}`).digest('base64')}`;
  return String(headers['webhook-signature'] ?? '').split(' ').includes(expected);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (d: Buffer) => chunks.push(d));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    if (!verified(req.headers, body)) badSignatures += 1;
    let event: { type?: string; data?: { text?: string } } = {};
    try {
      event = JSON.parse(body) as typeof event;
    } catch {
      // counted as nothing
    }
    res.writeHead(200).end();
    if (event.type !== 'message.received') return;
    const now = Date.now();
    received += 1;
    firstAt ||= now;
    lastAt = now;
    const text = event.data?.text ?? '';
    seen.set(text, (seen.get(text) ?? 0) + 1);
    const sentAt = Number(text.split(':')[2]);
    if (sentAt > 0) latencies.push(now - sentAt);
  });
});

type Command = { id: number; cmd: 'ping' | 'listen' | 'close' | 'reset' | 'stats'; arg?: unknown };

async function handle(c: Command): Promise<unknown> {
  switch (c.cmd) {
    case 'ping':
      return null;
    case 'listen':
      await new Promise<void>((r) => server.listen(Number(c.arg ?? 0), '127.0.0.1', r));
      return (server.address() as { port: number }).port;
    case 'close':
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      return null;
    case 'reset':
      received = 0;
      firstAt = 0;
      lastAt = 0;
      badSignatures = 0;
      latencies = [];
      seen = new Map();
      return null;
    case 'stats': {
      const stats: ReceiverStats = { received, unique: seen.size, firstAt, lastAt, badSignatures, latencies: c.arg ? latencies : [] };
      if (c.arg) stats.texts = [...seen.entries()];
      return stats;
    }
  }
}

process.on('message', (c: Command) => {
  void handle(c).then((value) => process.send!({ id: c.id, value }));
});
process.once('SIGTERM', () => process.exit(0));
// The bench went away: so does the receiver.
process.once('disconnect', () => process.exit(0));
