/**
 * A load generator in its own process (so it never shares the daemon's or the bench's event loop):
 * autocannon with bodies that vary from request to request, as a client's traffic does.
 *
 * argv[2]: a LoadSpec as JSON. stdout: one LoadReport as JSON.
 * - `send`: `{ phone, message }` to `phones` recipients in turn (a client sends to many people;
 *   one phone repeated takes paths only a single chat takes).
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
const headers = { 'content-type': 'application/json', ...spec.headers };
let firstAcceptedAt = 0;
// Sends: one request per recipient, built once (autocannon keeps the bytes of a request without a
// setupRequest), each connection cycling through them: the generator costs what a fixed body
// costs, so the 2 shared cores are not taken from the server under test.
// Inbound: the body carries the send time, so it is built per request; the first 2xx is timed.
let n = 0;
const requests: autocannon.Request[] =
  spec.kind === 'send'
    ? Array.from({ length: spec.phones ?? 1000 }, (_, i) => ({ method: 'POST', headers, body: JSON.stringify({ phone: phone(i), message: 'benchmark message' }) }))
    : [
        {
          method: 'POST',
          headers,
          setupRequest: (req) => {
            n += 1;
            const chat = n % (spec.chats ?? 100);
            return { ...req, body: JSON.stringify({ from: phone(chat), message: `${chat}:${n}:${Date.now()}` }) };
          },
          onResponse: (status) => {
            if (firstAcceptedAt === 0 && status >= 200 && status < 300) firstAcceptedAt = Date.now();
          },
        },
      ];
const startedAt = Date.now();
autocannon(
  {
    url: spec.url,
    connections: spec.connections,
    ...(spec.amount ? { amount: spec.amount } : { duration: spec.seconds ?? 10 }),
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    requests,
  },
  (err, r) => {
    if (err) throw err;
    const report: LoadReport = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, non2xx: r.non2xx, errors: r.errors, startedAt, firstAcceptedAt };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  },
);
