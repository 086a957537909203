/**
 * The calls between the daemon's thread and a session thread (src/connection/threads/rpc.ts)
 * against Comlink, the usual library for calling into a worker, over a real worker thread:
 *
 * - a call answered at once, one after another, and 20,000 at once;
 * - 2,000 connections' hooks made callable from the thread (Comlink: a `proxy()` each, which is a
 *   MessageChannel of its own; ours: one port a thread, hooks named by the connection's number);
 * - a hook called from the thread while the daemon waits for its answer.
 *
 * Run: `node --import=tsx bench/session-rpc.ts` (3 rounds; medians in README's Dependencies).
 */
import { Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Endpoint, type WireMessage } from '../src/connection/threads/rpc.js';
import { startWorker } from '../src/domain/worker-thread.js';

const N = 20_000;
const HOOKS = 2_000;

interface Figures {
  one_after_another_us: number;
  at_once_us: number;
  hooks_made_ms: number;
  hook_call_us: number;
}

interface ComlinkApi {
  add(a: number, b: number): Promise<number>;
  keep(h: { onStatus(s: string): number }): Promise<number>;
  ping(i: number): Promise<number>;
}

const us = (ms: number, n: number) => Math.round((ms / n) * 10_000) / 10;

async function comlink(): Promise<Figures> {
  const w = new Worker(new URL('./session-rpc-comlink-worker.mjs', import.meta.url));
  const api = Comlink.wrap<ComlinkApi>(nodeEndpoint(w));
  await api.add(1, 2);
  let t = performance.now();
  for (let i = 0; i < N; i++) await api.add(i, 1);
  const seq = us(performance.now() - t, N);
  t = performance.now();
  await Promise.all(Array.from({ length: N }, (_, i) => api.add(i, 1)));
  const par = us(performance.now() - t, N);
  t = performance.now();
  for (let i = 0; i < HOOKS; i++) await api.keep(Comlink.proxy({ onStatus: () => 1 }));
  const made = Math.round(performance.now() - t);
  t = performance.now();
  for (let i = 0; i < HOOKS; i++) await api.ping(i);
  const hook = us(performance.now() - t, HOOKS);
  await w.terminate();
  return { one_after_another_us: seq, at_once_us: par, hooks_made_ms: made, hook_call_us: hook };
}

async function ours(): Promise<Figures> {
  const w = startWorker(import.meta.url, 'session-rpc-worker');
  const e = new Endpoint(w);
  w.on('message', (m: WireMessage) => e.receive(m));
  const hooks: Array<{ onStatus(s: string): number }> = [];
  e.on('hook', (i: number, _name: string, args: string[]) => hooks[i]!.onStatus(args[0]!));
  await e.call('add', [1, 2]);
  let t = performance.now();
  for (let i = 0; i < N; i++) await e.call('add', [i, 1]);
  const seq = us(performance.now() - t, N);
  t = performance.now();
  await Promise.all(Array.from({ length: N }, (_, i) => e.call('add', [i, 1])));
  const par = us(performance.now() - t, N);
  t = performance.now();
  for (let i = 0; i < HOOKS; i++) hooks.push({ onStatus: () => 1 });
  const made = Math.round(performance.now() - t);
  t = performance.now();
  for (let i = 0; i < HOOKS; i++) await e.call('ping', [i]);
  const hook = us(performance.now() - t, HOOKS);
  await w.terminate();
  return { one_after_another_us: seq, at_once_us: par, hooks_made_ms: made, hook_call_us: hook };
}

for (let round = 1; round <= 3; round++) console.log(JSON.stringify({ round, comlink: await comlink(), gateway: await ours() }));
