import test from 'ava';
import asyncHooksModule, * as asyncHooks from 'node:async_hooks';
import { AsyncLocalStorage } from 'node:async_hooks';
import { SocketTransactionStorage, withSharedTransactionStorage } from '../../src/connection/baileys/shared-async-storage.js';

// Guards: Baileys' per-socket AsyncLocalStorage is replaced while a socket is built, on every Node
// line we support. Node 22 and 24 export AsyncLocalStorage as a getter without a setter, where the
// old assignment threw "Cannot set property AsyncLocalStorage ... which has only a getter".

test('while a socket is built, modules that imported AsyncLocalStorage get the shared one (named and namespace imports)', (t) => {
  const seen = withSharedTransactionStorage(() => ({ named: new AsyncLocalStorage(), namespace: new asyncHooks.AsyncLocalStorage() }));
  t.true(seen.named instanceof SocketTransactionStorage, process.version);
  t.true(seen.namespace instanceof SocketTransactionStorage, process.version);
});

test('the original AsyncLocalStorage is back afterwards, also when building throws', (t) => {
  const before = Object.getOwnPropertyDescriptor(asyncHooksModule, 'AsyncLocalStorage');
  t.throws(() => withSharedTransactionStorage(() => { throw new Error('boom'); }), { message: 'boom' });
  t.deepEqual(Object.getOwnPropertyDescriptor(asyncHooksModule, 'AsyncLocalStorage'), before);
  t.false(new AsyncLocalStorage() instanceof SocketTransactionStorage);
  t.false(new asyncHooks.AsyncLocalStorage() instanceof SocketTransactionStorage);
});

test('each SocketTransactionStorage keeps its own value in the shared context', async (t) => {
  const a = new SocketTransactionStorage<string>();
  const b = new SocketTransactionStorage<string>();
  await a.run('A', async () => {
    await b.run('B', async () => {
      await new Promise((r) => setTimeout(r, 1));
      t.is(a.getStore(), 'A');
      t.is(b.getStore(), 'B');
      a.exit(() => t.is(a.getStore(), undefined));
    });
    t.is(b.getStore(), undefined);
  });
  t.is(a.getStore(), undefined);
});
