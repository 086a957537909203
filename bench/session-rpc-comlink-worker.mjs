// The session thread's side of bench/session-rpc.ts, with Comlink (see there).
import { parentPort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';

const hooks = [];
Comlink.expose(
  {
    add: (a, b) => a + b,
    keep: (h) => hooks.push(h),
    ping: async (i) => hooks[i].onStatus('x'),
  },
  nodeEndpoint(parentPort),
);
