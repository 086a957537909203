// Runs in its own process: autocannon posting sandbox inbound messages from many senders (so the
// webhook's per-chat ordering does not serialise the whole run).
// argv: url key seconds rate [amount]: `amount` > 0 sends exactly that many (a burst) instead of
// running for `seconds`.
import autocannon from 'autocannon';

const [url, key, seconds, rate, amount] = process.argv.slice(2);
let n = 0;
autocannon(
  {
    url: url!,
    connections: 20,
    ...(Number(amount) > 0 ? { amount: Number(amount) } : { duration: Number(seconds) }),
    ...(Number(rate) > 0 ? { overallRate: Number(rate) } : {}),
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key! },
        setupRequest: (req) => {
          n += 1;
          return { ...req, body: JSON.stringify({ from: `+1555${String(1_000_000 + (n % 500)).slice(1)}`, message: `m${n}` }) };
        },
      },
    ],
  },
  (err, r) => {
    if (err) throw err;
    process.stdout.write(`${JSON.stringify({ total: r.requests.total, non2xx: r.non2xx, errors: r.errors, rps: r.requests.average })}\n`);
  },
);
