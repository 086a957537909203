import type { Logger } from 'pino';
import type { ServerSecret } from '../config/server-secret.js';
import { generateServerSecret, hashSecret } from '../domain/secrets.js';
import type { PostgresStorage } from '../storage/postgres/index.js';
import { readGateway } from './gateway-record.js';

/**
 * The server secret of a gateway on PostgreSQL: one for every node, in the gateway record. Read
 * per request from memory; a rotation on any node reaches the others by NOTIFY (and at every
 * resync after a lost connection).
 */
export async function pgServerSecret(storage: PostgresStorage, logger: Logger): Promise<ServerSecret> {
  const { db, session } = storage;
  let hash: string | null = null;
  let retiring: string | null = null;
  const reload = async (): Promise<void> => {
    const row = await readGateway(db);
    hash = row?.serverSecretHash ?? null;
    retiring = row?.retiringSecretHash ?? null;
  };
  await reload();
  const reloadLogged = (): void => void reload().catch((err: unknown) => logger.warn({ err }, 'could not re-read the server secret'));
  storage.onShared((kind) => {
    if (kind === 'gateway') reloadLogged();
  });
  storage.onResync(reloadLogged);
  const announce = `SELECT pg_notify('gw_changes', $1)`;
  return {
    hash: () => hash,
    retiringHash: () => retiring,
    async rotate() {
      const secret = generateServerSecret();
      const next = hashSecret(secret);
      // Kept: the last secret known to have been shown (see config/server-secret.ts).
      const { rows } = await db.query<{ retiring: string | null }>(
        'rotating the server secret',
        `UPDATE gateway SET retiring_secret_hash = coalesce(retiring_secret_hash, server_secret_hash), server_secret_hash = $1 WHERE id = 1 RETURNING retiring_secret_hash AS retiring`,
        [next],
      );
      hash = next;
      retiring = rows[0]?.retiring ?? null;
      await db.query('announcing the server secret', announce, [session.payload('gateway', '1')]);
      return secret;
    },
    async shown() {
      if (retiring === null) return;
      retiring = null;
      await db.query('retiring the old server secret', 'UPDATE gateway SET retiring_secret_hash = NULL WHERE id = 1 AND server_secret_hash = $1', [hash]);
      await db.query('announcing the server secret', announce, [session.payload('gateway', '1')]);
    },
  };
}
