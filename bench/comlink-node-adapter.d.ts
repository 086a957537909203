// Comlink's Node adapter has types (dist/esm/node-adapter.d.ts) but no exports map that names them
// for the .mjs path (bench/session-rpc.ts).
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  import type { MessagePort, Worker } from 'node:worker_threads';
  export default function nodeEndpoint(nep: MessagePort | Worker): Endpoint;
}
