import type { AuthStateRepository } from '../storage/ports/auth-state.js';

/**
 * The auth store as one connection writes it: every snapshot carries the lease epoch its node held
 * when the connection was opened (issue 23 item 2). A node that loses an instance's lease and takes
 * it back opens a new connection under the new epoch; anything the old one still writes (a late
 * creds update of a socket being closed) carries the old epoch, and PostgreSQL refuses it
 * (gw_fence, migration 009) instead of storing stale Signal keys over the ones another node wrote
 * meanwhile. `epoch` null (no cluster, files engine): the store as it is.
 */
export function stampedAuth(repo: AuthStateRepository, epoch: number | null): AuthStateRepository {
  if (epoch === null) return repo;
  return {
    read: (id, revive) => repo.read(id, revive),
    write: (id, snapshot) => repo.write(id, snapshot, { epoch }),
    remove: (id) => repo.remove(id),
    isPaired: (id) => repo.isPaired(id),
  };
}
