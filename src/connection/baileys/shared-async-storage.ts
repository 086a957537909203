import asyncHooks, { AsyncLocalStorage } from 'node:async_hooks';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Works around a leak in Baileys 7.0.0-rc14 (`addTransactionCapability`, lib/Utils/auth-utils.js,
 * upstream issue WhiskeySockets/Baileys#2806): every socket creates its own `AsyncLocalStorage`
 * (`txStorage`), and its first transaction enables it. Node keeps every enabled storage in a
 * process-wide list until `disable()`, which Baileys never calls; on Node 20 (async_hooks
 * propagation) each one then stamps a property onto every promise and timer created anywhere in
 * the process, forever. With N sessions and R reconnects that is N x R properties on every async
 * resource: heap and CPU grow with every reconnect and every restart of a daemon in one process.
 *
 * The fix here: while Baileys builds a socket (makeWASocket runs addTransactionCapability
 * synchronously), `AsyncLocalStorage` is a class whose instances all share ONE real storage, each
 * keeping its own value under its own key in the shared context (as upstream's proposed fix,
 * PR #2722, does). However many sockets come and go, one storage is enabled.
 */

type Context = ReadonlyMap<SocketTransactionStorage<unknown>, unknown>;

const shared = new AsyncLocalStorage<Context>();
const EMPTY: Context = new Map();

/** The AsyncLocalStorage API Baileys uses (run, getStore, exit, enterWith), over the shared storage. */
export class SocketTransactionStorage<T> {
  run<R, A extends unknown[]>(store: T, callback: (...args: A) => R, ...args: A): R {
    const next = new Map(shared.getStore() ?? EMPTY);
    next.set(this as SocketTransactionStorage<unknown>, store);
    return shared.run(next, callback, ...args);
  }

  getStore(): T | undefined {
    return shared.getStore()?.get(this as SocketTransactionStorage<unknown>) as T | undefined;
  }

  exit<R, A extends unknown[]>(callback: (...args: A) => R, ...args: A): R {
    const current = shared.getStore();
    if (!current?.has(this as SocketTransactionStorage<unknown>)) return callback(...args);
    const next = new Map(current);
    next.delete(this as SocketTransactionStorage<unknown>);
    return shared.run(next, callback, ...args);
  }

  enterWith(store: T): void {
    const next = new Map(shared.getStore() ?? EMPTY);
    next.set(this as SocketTransactionStorage<unknown>, store);
    shared.enterWith(next);
  }

  /** Nothing to release: the shared storage stays enabled, one for the whole process. */
  disable(): void {}
}

/**
 * Runs `build` (a synchronous makeWASocket call) with `AsyncLocalStorage` replaced by
 * SocketTransactionStorage for every module that imported it from node:async_hooks, Baileys
 * included (syncBuiltinESMExports updates ES module bindings of built-ins); restored right after.
 *
 * Swapped with defineProperty and restored from the saved descriptor, not by assignment: Node 20
 * exports a plain data property, but Node 22 and 24 export a getter without a setter (it picks the
 * AsyncContextFrame implementation lazily), where assignment throws "Cannot set property
 * AsyncLocalStorage ... which has only a getter". Both lines keep the property configurable.
 */
export function withSharedTransactionStorage<T>(build: () => T): T {
  const original = Object.getOwnPropertyDescriptor(asyncHooks, 'AsyncLocalStorage');
  if (original === undefined || original.configurable !== true) return build(); // cannot swap: Baileys' own storage (a leak, not a failure)
  Object.defineProperty(asyncHooks, 'AsyncLocalStorage', { value: SocketTransactionStorage, writable: true, enumerable: true, configurable: true });
  syncBuiltinESMExports();
  try {
    return build();
  } finally {
    Object.defineProperty(asyncHooks, 'AsyncLocalStorage', original);
    syncBuiltinESMExports();
  }
}

/** Enabled AsyncLocalStorage instances in this process, as seen on a new timer (one symbol each); for tests. */
export function enabledAsyncStorages(): number {
  const timer = setTimeout(() => undefined, 0);
  clearTimeout(timer);
  return Object.getOwnPropertySymbols(timer).filter((s) => s.description === 'kResourceStore').length;
}
