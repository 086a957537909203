/**
 * Guards issue 21 item 18: `/openapi.json` named `http://127.0.0.1:8080` as its server whatever
 * the daemon listened on. It now names the address the document was fetched from (the request's
 * Host), so "try it" and generated clients reach this daemon; a Host that is not a plain
 * host[:port] gets the relative `/` instead of being echoed.
 */
import test from 'ava';
import { request } from 'node:http';
import { startTestDaemon } from '../helpers/daemon.js';

function getWithHost(port: number, host: string): Promise<{ servers: Array<{ url: string }> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/openapi.json', headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(JSON.parse(text) as { servers: Array<{ url: string }> }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the OpenAPI server is the address the document was fetched from', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const port = Number(new URL(d.url).port);
  t.not(port, 8080);
  const doc = (await d.request('GET', '/openapi.json')).body as { servers: Array<{ url: string }> };
  t.deepEqual(doc.servers.map((s) => s.url), [`http://127.0.0.1:${port}`]);
  t.deepEqual((await getWithHost(port, 'gateway.example.net:9443')).servers.map((s) => s.url), ['http://gateway.example.net:9443']);
  t.deepEqual((await getWithHost(port, '[::1]:8081')).servers.map((s) => s.url), ['http://[::1]:8081']);
  // Not a host: never echoed into the document.
  t.deepEqual((await getWithHost(port, 'evil.example/"><script>')).servers.map((s) => s.url), ['/']);
});
