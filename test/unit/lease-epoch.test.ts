/**
 * Issue 23 item 2: a connection's auth writes carry the lease epoch its node held when the
 * connection was made (src/connection/lease-epoch.ts), so PostgreSQL can refuse an older tenure's
 * late write; without a cluster the store is used as it is.
 */
import test from 'ava';
import { stampedAuth } from '../../src/connection/lease-epoch.js';
import type { AuthSnapshot, AuthStateRepository } from '../../src/storage/ports/auth-state.js';

function recording(): { repo: AuthStateRepository; writes: Array<{ id: string; epoch: number | undefined }> } {
  const writes: Array<{ id: string; epoch: number | undefined }> = [];
  const repo: AuthStateRepository = {
    read: async () => null,
    write: async (id, _snapshot, options) => {
      writes.push({ id, epoch: options?.epoch });
    },
    remove: async () => undefined,
    isPaired: async () => true,
  };
  return { repo, writes };
}

const snapshot: AuthSnapshot = { creds: '{}', tables: [], paired: true };

test('every write of a connection carries the epoch it was made under; null leaves the store as it is', async (t) => {
  const { repo, writes } = recording();
  let held: number | null = 5;
  const opened = stampedAuth(repo, held);
  held = 7; // the node lost the lease and took it back: a new connection gets 7
  const reopened = stampedAuth(repo, held);
  await opened.write('inst_a', snapshot);
  await reopened.write('inst_a', snapshot);
  t.deepEqual(writes, [
    { id: 'inst_a', epoch: 5 },
    { id: 'inst_a', epoch: 7 },
  ]);
  t.is(stampedAuth(repo, null), repo);
  t.true(await opened.isPaired('inst_a'));
});
