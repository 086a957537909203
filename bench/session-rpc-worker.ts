// The session thread's side of bench/session-rpc.ts, with the gateway's endpoint (see there).
import { parentPort } from 'node:worker_threads';
import { Endpoint, type WireMessage } from '../src/connection/threads/rpc.js';

const port = parentPort!;
const e = new Endpoint(port);
e.on('add', (a: number, b: number) => a + b).on('ping', (i: number) => e.call('hook', [i, 'onStatus', ['x']]));
port.on('message', (m: WireMessage) => e.receive(m));
