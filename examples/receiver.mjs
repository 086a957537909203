// A webhook receiver that verifies Standard Webhooks signatures and prints each verified event.
// Usage: WEBHOOK_SECRET=whsec_... node examples/receiver.mjs [port]   (default port 3000, 127.0.0.1)
// Any Standard Webhooks library works; this one is the `standardwebhooks` npm package.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the instance webhook secret (whsec_...)');
  process.exit(2);
}
const port = Number(process.argv[2] ?? 3000);
const wh = new Webhook(secret);

createServer((req, res) => {
  // Deliveries are POSTs; a GET only asks whether the receiver is up (the README waits for it).
  if (req.method === 'GET') {
    res.writeHead(200).end('ok\n');
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    let event;
    try {
      event = wh.verify(body, req.headers); // throws unless the signature is valid and fresh
    } catch (err) {
      console.log(`refused a delivery: ${err instanceof Error ? err.message : String(err)}`);
      res.writeHead(400).end();
      return;
    }
    const d = event.data ?? {};
    const detail = event.type === 'message.received' ? ` from ${d.from ?? d.sender}: ${d.text ?? `(${d.type})`}` : event.type === 'message.status' ? ` ${d.messageId} is ${d.status}` : event.type === 'instance.status' ? ` ${d.from} -> ${d.to}` : '';
    console.log(`verified ${event.type}${detail}`);
    res.writeHead(200).end();
  });
}).listen(port, '127.0.0.1', () => console.log(`receiver listening on http://127.0.0.1:${port}/hook`));
