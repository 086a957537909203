import { Agent as HttpAgent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { guardedLookup } from '../../src/webhooks/guarded-lookup.js';
import { AttemptAbort, postWebhook, RESPONSE_PEEK_BYTES, type PostInput } from '../../src/webhooks/http-post.js';

// Rule: one webhook attempt over real HTTP: the body and headers arrive as sent, a 2xx is a
// success whatever its body, anything else is a failure with a short reason, the whole exchange is
// bounded by timeoutMs, nothing is followed or retried, and the keep-alive socket is reused after
// a short 2xx.

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ server: Server; url: string; sockets: Set<unknown> }> {
  const sockets = new Set<unknown>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => handler(req, res, body));
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=abc`, sockets };
}

const agents = () => ({ http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) });

function input(url: string, overrides: Partial<PostInput> = {}): PostInput {
  return {
    url,
    body: JSON.stringify({ type: 'message.received', n: 1 }),
    headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'user-agent': 'wa-gateway-test' },
    timeoutMs: 2000,
    lookup: guardedLookup(async (host) => [host], true),
    agents: agents(),
    abort: new AttemptAbort(),
    ...overrides,
  };
}

const close = (server: Server) => new Promise<void>((r) => {
  server.closeAllConnections();
  server.close(() => r());
});

test('a 2xx is a success; the body and headers arrive as sent; the socket is kept for the next attempt', async (t) => {
  const seen: Array<{ method?: string; url?: string; headers: IncomingMessage['headers']; body: string }> = [];
  const { server, url, sockets } = await serve((req, res, body) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    res.writeHead(204).end();
  });
  try {
    const shared = input(url);
    t.deepEqual(await postWebhook(shared), { ok: true, status: 204 });
    t.deepEqual(await postWebhook(shared), { ok: true, status: 204 });
    t.is(seen.length, 2);
    t.is(seen[0]!.method, 'POST');
    t.is(seen[0]!.url, '/hook?token=abc');
    t.is(seen[0]!.body, shared.body);
    t.is(seen[0]!.headers['webhook-id'], 'msg_1');
    t.is(seen[0]!.headers['content-type'], 'application/json');
    t.is(seen[0]!.headers['content-length'], String(Buffer.byteLength(shared.body)));
    t.is(sockets.size, 1, 'one keep-alive connection for both');
  } finally {
    await close(server);
  }
});

test('a 2xx with a large or stalled body is still a success, and the socket is let go', async (t) => {
  const { server, url, sockets } = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    if (req.url?.startsWith('/big')) res.write('x'.repeat(RESPONSE_PEEK_BYTES * 4));
    else res.write('partial');
    // never ended: the rest of the body stalls
  });
  const closed = () => Promise.all([...sockets].map((s) => new Promise<void>((r) => ((s as import('node:net').Socket).destroyed ? r() : (s as import('node:net').Socket).once('close', () => r())))));
  const base = url.replace('/hook?token=abc', '');
  try {
    const started = Date.now();
    t.deepEqual(await postWebhook(input(`${base}/stall`, { timeoutMs: 300 })), { ok: true, status: 200 });
    t.true(Date.now() - started < 1000, 'answered at the status line');
    // The stalled body does not hold the connection past the timeout.
    await closed();
    t.true(Date.now() - started < 2000, 'the stalled connection was closed after timeoutMs');
    sockets.clear();
    t.deepEqual(await postWebhook(input(`${base}/big`, { timeoutMs: 10_000 })), { ok: true, status: 200 });
    // A body past RESPONSE_PEEK_BYTES is not downloaded: the connection is cut, not kept.
    const cut = Date.now();
    await closed();
    t.true(Date.now() - cut < 2000, 'the big body was cut off');
    // Aborted while the rest of a 2xx body stalls: a success, and the connection is cut at once.
    sockets.clear();
    const abort = new AttemptAbort();
    t.deepEqual(await postWebhook(input(`${base}/stall`, { timeoutMs: 60_000, abort })), { ok: true, status: 200 });
    const aborted = Date.now();
    abort.abort();
    await closed();
    t.true(Date.now() - aborted < 2000, 'the stalled connection was cut by the abort, not the 60 s timeout');
  } finally {
    await close(server);
  }
});

test('errors: a 500 with its body cut short, a redirect not followed, no answer in time, a refused connection, an abort, a private target', async (t) => {
  let redirectsFollowed = 0;
  const { server, url } = await serve((req, res) => {
    const path = req.url ?? '';
    if (path.startsWith('/err')) res.writeHead(500).end(`boom\n${'y'.repeat(RESPONSE_PEEK_BYTES * 10)}`);
    else if (path.startsWith('/redirect')) res.writeHead(302, { location: '/target' }).end();
    else if (path.startsWith('/target')) {
      redirectsFollowed++;
      res.writeHead(200).end();
    } else if (path.startsWith('/slow')) setTimeout(() => res.writeHead(200).end(), 2000);
  });
  const base = url.replace('/hook?token=abc', '');
  try {
    const err = await postWebhook(input(`${base}/err`));
    t.false(err.ok);
    t.is(err.ok ? 0 : err.status, 500);
    t.true(!err.ok && err.error.startsWith('HTTP 500: boom y'), JSON.stringify(err));
    t.true(!err.ok && err.error.length < 300, 'a short reason');
    // Issue 21 item 13: what may be logged says the status and the size, never the receiver's words.
    t.true(!err.ok && err.logError === 'HTTP 500', JSON.stringify(err));
    t.true(!err.ok && err.bodyBytes !== null && err.bodyBytes >= 5, JSON.stringify(err));

    t.deepEqual(await postWebhook(input(`${base}/redirect`)), { ok: false, status: 302, error: 'HTTP 302: redirects are not followed', logError: 'HTTP 302: redirects are not followed', bodyBytes: 0, aborted: false });
    t.is(redirectsFollowed, 0);

    t.deepEqual(await postWebhook(input(`${base}/slow`, { timeoutMs: 200 })), { ok: false, status: null, error: 'timeout: no answer within 200 ms', logError: 'timeout: no answer within 200 ms', bodyBytes: null, aborted: false });

    const refused = await postWebhook(input('http://127.0.0.1:9/hook'));
    t.true(!refused.ok && refused.status === null && /^ECONNREFUSED: /.test(refused.error), JSON.stringify(refused));

    const abort = new AttemptAbort();
    const pending = postWebhook(input(`${base}/slow`, { abort }));
    setTimeout(() => abort.abort(), 50);
    t.deepEqual(await pending, { ok: false, status: null, error: 'aborted: daemon shutting down', logError: 'aborted: daemon shutting down', bodyBytes: null, aborted: true });
    // Aborted before it starts: nothing is sent.
    t.deepEqual(await postWebhook(input(`${base}/slow`, { abort })), { ok: false, status: null, error: 'aborted: daemon shutting down', logError: 'aborted: daemon shutting down', bodyBytes: null, aborted: true });

    const guarded = await postWebhook(input(`http://hooks.example.test:${new URL(base).port}/hook`, { lookup: guardedLookup(async () => ['127.0.0.1'], false) }));
    t.true(!guarded.ok && /hooks\.example\.test resolves to a loopback\/private address/.test(guarded.error), JSON.stringify(guarded));
  } finally {
    await close(server);
  }
});
