import type { Socket } from 'node:net';

/** What Node's `fetch()` takes as `dispatcher` (an undici Dispatcher; the part named here is what fetch calls). */
export interface FetchDispatcher {
  dispatch(options: object, handler: object): boolean;
  close(): Promise<void>;
}

/**
 * fetch() options that go through `dispatcher`: Node's fetch reads `dispatcher` from its init,
 * which the standard RequestInit type does not name.
 */
export function viaDispatcher(dispatcher: FetchDispatcher): RequestInit {
  return Object.assign<RequestInit, { dispatcher: FetchDispatcher }>({}, { dispatcher });
}

/** Opens a connection to host:port through a proxy (TLS on top when `secure`), ready to use. */
export type TunnelOpener = (target: { host: string; port: number; secure: boolean; servername?: string }) => Promise<Socket>;

/** What undici asks a custom connector for (its `connect` option; undici-types' `buildConnector.Options`). */
interface ConnectorOptions {
  hostname: string;
  protocol: string;
  port: string;
  servername?: string | null;
}
type ConnectorCallback = (...args: [null, Socket] | [Error, null]) => void;
type AgentClass = new (options: { connect: (options: ConnectorOptions, callback: ConnectorCallback) => void }) => FetchDispatcher;

const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * undici's `Agent` class, the one Node's own `fetch()` is built on. Node does not export it; its
 * global dispatcher is an instance. That class, rather than the `undici` package, because a
 * dispatcher from another undici version than the fetch that calls it speaks another handler
 * protocol (undici 7 changed it): this one always matches the running Node.
 */
async function fetchAgentClass(): Promise<AgentClass> {
  const global = globalThis as unknown as Record<symbol, { constructor?: unknown } | undefined>;
  // Node creates its global dispatcher at the first fetch().
  if (!global[GLOBAL_DISPATCHER]) await fetch('data:,');
  const ctor = global[GLOBAL_DISPATCHER]?.constructor;
  if (typeof ctor !== 'function' || ctor.name !== 'Agent') {
    throw new Error("fetch()'s global dispatcher is not undici's Agent (something replaced it), so a proxy cannot carry media downloads");
  }
  return ctor as AgentClass;
}

/**
 * A dispatcher for `fetch()` whose every connection is a tunnel `open` makes (through the
 * instance's proxy): the HTTP on top, pooling and keep-alive stay undici's.
 */
export async function fetchDispatcher(open: TunnelOpener): Promise<FetchDispatcher> {
  const Agent = await fetchAgentClass();
  return new Agent({
    connect(options, callback) {
      const secure = options.protocol === 'https:';
      const port = Number(options.port) || (secure ? 443 : 80);
      // IPv6 literals come bracketed from the URL; the proxy wants the bare address.
      const host = options.hostname.replace(/^\[|\]$/g, '');
      open({ host, port, secure, ...(options.servername ? { servername: options.servername } : {}) }).then(
        (socket) => callback(null, socket),
        (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
      );
    },
  });
}
