/**
 * What got costs the media fetch of send-media (`"url"`), against node:http doing the same
 * download, in the same run: the first import of got (once per daemon, on the first URL send;
 * never in a CLI command), and the time of one download (a 100 KiB and a 4 MiB file from a local
 * server, interleaved, median of 40 each). Prints one JSON line.
 *
 *   node --import=tsx bench/media-fetch.ts
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fetchMedia } from '../src/media/remote-media.js';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// The import, in fresh processes (what the first URL send of a daemon pays).
const importMs: number[] = [];
for (let i = 0; i < 7; i++) {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', "const t = performance.now(); await import('got'); console.log(performance.now() - t);"], { encoding: 'utf8' });
  importMs.push(Number(out.trim()));
}

const sizes = { small: 100 * 1024, large: 4 * 1024 * 1024 };
const bodies = { small: Buffer.alloc(sizes.small, 1), large: Buffer.alloc(sizes.large, 2) };
const server = createServer((req, res) => {
  const body = req.url === '/large' ? bodies.large : bodies.small;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) }).end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const dir = await mkdtemp(join(tmpdir(), 'bench-fetch-'));

const plain = (url: string, dest: string): Promise<void> =>
  new Promise((resolve, reject) => {
    get(url, (res) => {
      pipeline(res, createWriteStream(dest)).then(resolve, reject);
    }).on('error', reject);
  });

const options = { maxBytes: 16 * 1024 * 1024, timeoutMs: 30_000, allowPrivate: true };
await fetchMedia(`${base}/small`, join(dir, 'warm'), options); // got loaded and warm
const runs: Record<string, number[]> = { gotSmall: [], httpSmall: [], gotLarge: [], httpLarge: [] };
for (let i = 0; i < 40; i++) {
  for (const size of ['small', 'large'] as const) {
    const key = size === 'small' ? 'Small' : 'Large';
    let t = performance.now();
    await fetchMedia(`${base}/${size}`, join(dir, `g${i}`), options);
    runs[`got${key}`]!.push(performance.now() - t);
    t = performance.now();
    await plain(`${base}/${size}`, join(dir, `h${i}`));
    runs[`http${key}`]!.push(performance.now() - t);
  }
}
server.close();
await rm(dir, { recursive: true, force: true });
const round = (n: number): number => Math.round(n * 100) / 100;
console.log(
  JSON.stringify({
    gotImportMsMedian: round(median(importMs)),
    fetch100KiBMs: { got: round(median(runs.gotSmall!)), nodeHttp: round(median(runs.httpSmall!)) },
    fetch4MiBMs: { got: round(median(runs.gotLarge!)), nodeHttp: round(median(runs.httpLarge!)) },
  }),
);
