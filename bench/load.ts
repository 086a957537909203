/**
 * A load generator in its own process (so it never shares the daemon's or the bench's event loop):
 * autocannon with a body built per request, as a client's traffic is, not one body repeated.
 *
 * argv[2]: a LoadSpec as JSON. stdout: one LoadReport as JSON.
 * - `send`: `{ phone, message }` to one of `phones` recipients in turn (a client sends to many
 *   people; one phone repeated takes paths only a single chat takes).
 * - `inbound`: sandbox inbound `{ from, message }` from one of `chats` senders in turn; the message
 *   is `chat:n:sentAtMs`, so the receiver can time each event from the client's call.
 * `firstAcceptedAt` (wall clock, ms) is when the first 2xx answer arrived: where a client starts
 * counting webhook throughput.
 */
import autocannon from 'autocannon';
import type { LoadReport, LoadSpec } from './lib.js';

/** A 7-digit-suffix North American number, `+1555XXXXXXX`, distinct for each i < 10^7. */
function phone(i: number): string {
  return `+1555${String(10_000_000 + i).slice(1)}`;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
let n = 0;
let firstAcceptedAt = 0;
const body = (): string => {
  n += 1;
  if (spec.kind === 'send') return JSON.stringify({ phone: phone(n % (spec.phones ?? 1000)), message: 'benchmark message' });
  const chat = n % (spec.chats ?? 100);
  return JSON.stringify({ from: phone(chat), message: `${chat}:${n}:${Date.now()}` });
};
const startedAt = Date.now();
autocannon(
  {
    url: spec.url,
    connections: spec.connections,
    ...(spec.amount ? { amount: spec.amount } : { duration: spec.seconds ?? 10 }),
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...spec.headers },
        setupRequest: (req) => ({ ...req, body: body() }),
        onResponse: (status) => {
          if (firstAcceptedAt === 0 && status >= 200 && status < 300) firstAcceptedAt = Date.now();
        },
      },
    ],
  },
  (err, r) => {
    if (err) throw err;
    const report: LoadReport = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, non2xx: r.non2xx, errors: r.errors, startedAt, firstAcceptedAt };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  },
);
