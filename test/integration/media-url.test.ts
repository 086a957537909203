/**
 * Guards issue 24 item 1, media from a URL: `fetchMedia` (got under the webhook SSRF rules) against
 * real local HTTP servers: a file is fetched with its type and name; a redirect to a private
 * address (an IP literal, or a name that resolves to one) is refused and never reached; a body over
 * media.maxBytes is refused by its Content-Length and, without one, while it streams; a server that
 * does not answer in time, an HTTP error and a redirect loop each fail naming their cause.
 *
 * Which addresses are private is the webhook policy's (isPrivateAddress); every local address is
 * private to it, so these tests pass a predicate that calls only 127.0.0.2 private, the second
 * server's address (the seam the daemon never uses). The daemon-level tests
 * (account-sandbox.test.ts) use the real predicate.
 */
import test from 'ava';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../../src/domain/errors.js';
import { fetchMedia } from '../../src/media/remote-media.js';

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1'): Promise<{ server: Server; base: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, base: `http://${host}:${(server.address() as AddressInfo).port}`, hits };
}

const only127_0_0_2 = (a: string): boolean => a === '127.0.0.2';
const base = { maxBytes: 1000, timeoutMs: 2000, allowPrivate: false, isPrivate: only127_0_0_2 };

async function attempt(url: string, options: Partial<typeof base> & { resolve?: (h: string) => Promise<string[]> } = {}): Promise<{ error: GatewayError | null; dest: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'media-url-'));
  const dest = join(dir, 'file');
  try {
    await fetchMedia(url, dest, { ...base, ...options });
    return { error: null, dest };
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { error: err, dest };
  }
}

test('a file is fetched to disk with its Content-Type and a name from Content-Disposition', async (t) => {
  const { server, base: url } = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf; charset=binary', 'content-disposition': 'attachment; filename="menu.pdf"' });
    res.end('%PDF-1.4 menu');
  });
  t.teardown(() => server.close());
  const dir = await mkdtemp(join(tmpdir(), 'media-url-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const fetched = await fetchMedia(`${url}/files/x`, join(dir, 'f'), base);
  t.deepEqual(fetched, { size: 13, contentType: 'application/pdf', fileName: 'menu.pdf' });
  t.is(await readFile(join(dir, 'f'), 'utf8'), '%PDF-1.4 menu');
});

test('a redirect to a private address is refused and the private server is never reached', async (t) => {
  const inside = await serve((_req, res) => res.end('secret'), '127.0.0.2');
  t.teardown(() => inside.server.close());
  const port = new URL(inside.base).port;
  const outside = await serve((req, res) => {
    const to = req.url === '/literal' ? `${inside.base}/meta` : `http://internal.test:${port}/meta`;
    res.writeHead(302, { location: to }).end();
  });
  t.teardown(() => outside.server.close());
  const resolve = async (host: string) => (host === 'internal.test' ? ['127.0.0.2'] : ['127.0.0.1']);

  const literal = await attempt(`${outside.base}/literal`, { resolve });
  t.is(literal.error?.code, 'MEDIA_FETCH_FAILED');
  t.regex(literal.error?.message ?? '', /127\.0\.0\.2 is a loopback\/private address.*webhooks\.allowPrivateTargets/);

  const named = await attempt(`${outside.base}/named`, { resolve });
  t.is(named.error?.code, 'MEDIA_FETCH_FAILED');
  t.regex(named.error?.message ?? '', /media host internal\.test resolves to a loopback\/private address \(127\.0\.0\.2\)/);

  t.deepEqual(inside.hits, [], 'the private server got no request');
  t.deepEqual(outside.hits, ['/literal', '/named']);
  // With private targets allowed (webhooks.allowPrivateTargets) the same redirect is followed.
  const allowed = await attempt(`${outside.base}/literal`, { resolve, allowPrivate: true });
  t.is(allowed.error, null);
  t.is(await readFile(allowed.dest, 'utf8'), 'secret');
});

test('a body over media.maxBytes is refused: by its Content-Length before reading, and while it streams without one', async (t) => {
  let streamed = 0;
  const { server, base: url } = await serve((req, res) => {
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': '5000' });
      res.end(Buffer.alloc(5000));
      return;
    }
    // Chunked, no length: 64 chunks of 100 bytes, far past the 1000-byte limit.
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    let n = 0;
    const timer = setInterval(() => {
      if (n++ >= 64 || res.destroyed) {
        clearInterval(timer);
        res.end();
        return;
      }
      streamed += 100;
      res.write(Buffer.alloc(100));
    }, 2);
  });
  t.teardown(() => server.close());
  const declared = await attempt(`${url}/declared`);
  t.is(declared.error?.code, 'MEDIA_FETCH_FAILED');
  t.regex(declared.error?.message ?? '', /larger than media\.maxBytes \(5000 > 1000 bytes\)/);

  const chunked = await attempt(`${url}/chunked`);
  t.is(chunked.error?.code, 'MEDIA_FETCH_FAILED');
  t.regex(chunked.error?.message ?? '', /larger than media\.maxBytes/);
  const kept = await stat(chunked.dest).then((s) => s.size, () => 0);
  t.true(kept <= 1000, `at most the limit reached the disk (${kept})`);
  t.true(streamed < 6400, 'the download was cut off, not read to its end');
});

test('no answer in time, an HTTP error and a redirect loop each fail naming the cause', async (t) => {
  const { server, base: url } = await serve((req, res) => {
    if (req.url === '/slow') return; // never answers
    if (req.url?.startsWith('/loop')) {
      res.writeHead(302, { location: `/loop${Number(req.url.slice(5) || 0) + 1}` }).end();
      return;
    }
    res.writeHead(404).end('nope');
  });
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const slow = await attempt(`${url}/slow`, { timeoutMs: 300 });
  t.regex(slow.error?.message ?? '', /no complete answer within 300 ms \(media\.fetchTimeoutMs\)/);
  const missing = await attempt(`${url}/missing`);
  t.regex(missing.error?.message ?? '', /the server answered HTTP 404/);
  const loop = await attempt(`${url}/loop`);
  t.regex(loop.error?.message ?? '', /more than 5 redirects/);
  const ftp = await attempt('ftp://example.com/x');
  t.regex(ftp.error?.message ?? '', /only http:\/\/ and https:\/\/ URLs/);
  for (const e of [slow, missing, loop, ftp]) t.is(e.error?.code, 'MEDIA_FETCH_FAILED');
});
