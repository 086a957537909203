/**
 * What a login's read of the stored session costs with 812 one-time pre-keys (what a device that
 * pairs uploads and keeps until contacts use them), stored as earlier versions did (a JSON object
 * of two Buffers each) against packed (auth-state.ts PACKED_ROWS): 300 files of each form through
 * the files engine and `AuthStore.open`, as the daemon opens them at a restart, three rounds in
 * turn. Prints the file's size and the process' CPU and wall time an open.
 *
 *   node --import=tsx bench/auth-load.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferJSON } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { AuthStore } from '../src/connection/baileys/auth-state.js';
import { FileAuthStates } from '../src/storage/files/auth-state.js';
import { UNGUARDED } from '../src/fs/write-guard.js';

const FILES = 300;
const logger = pino({ level: 'silent' });
const dir = await mkdtemp(join(tmpdir(), 'gw-auth-load-'));
const repos = { json: new FileAuthStates(join(dir, 'json'), UNGUARDED), packed: new FileAuthStates(join(dir, 'packed'), UNGUARDED) };
const sizes = { json: 0, packed: 0 };
await mkdir(join(dir, 'json'), { mode: 0o700 });

for (let i = 0; i < FILES; i++) {
  const id = `inst_${i}`;
  const store = await AuthStore.open(repos.packed, id, { logger, debounceMs: 1 });
  const preKeys: Record<string, { private: Buffer; public: Buffer }> = {};
  for (let k = 1; k <= 812; k++) preKeys[String(k)] = { private: randomBytes(32), public: randomBytes(32) };
  await store.state.keys.set({ 'pre-key': preKeys });
  await store.flush();
  const text = await readFile(repos.packed.file(id), 'utf8');
  sizes.packed += text.length;
  // The same session as an earlier version wrote it: each pre-key its JSON object.
  const doc = JSON.parse(text) as { keys: Record<string, unknown> };
  doc.keys['pre-key'] = JSON.parse(JSON.stringify(preKeys, BufferJSON.replacer)) as unknown;
  const old = JSON.stringify(doc);
  sizes.json += old.length;
  await writeFile(repos.json.file(id), old, { mode: 0o600 });
}
console.log(`auth-load: a file with 812 pre-keys: ${Math.round(sizes.json / FILES / 1024)} KB as JSON objects, ${Math.round(sizes.packed / FILES / 1024)} KB packed`);

const results: Record<'json' | 'packed', number[]> = { json: [], packed: [] };
for (let round = 1; round <= 3; round++) {
  for (const form of ['json', 'packed'] as const) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < FILES; i++) await AuthStore.open(repos[form], `inst_${i}`, { logger });
    const wall = (performance.now() - t0) / FILES;
    const cpu = process.cpuUsage(cpu0);
    const us = (cpu.user + cpu.system) / FILES;
    results[form].push(us);
    console.log(`auth-load: round ${round}, ${form}: ${Math.round(us)} µs of CPU an open (${Math.round(wall * 1000)} µs wall)`);
  }
}
const ratios = results.packed.map((p, i) => (p / results.json[i]!).toFixed(2));
console.log(`auth-load: packed against JSON objects, CPU an open: ${ratios.join(', ')}`);
await rm(dir, { recursive: true, force: true });
