import { GatewayError } from '../domain/errors.js';
import { generateServerSecret, hashSecret, verifySecret } from '../domain/secrets.js';
import type { Db } from '../storage/postgres/db.js';

/** The one gateway a database holds: what every node shares. */
export interface GatewayRow {
  serverSecretHash: string | null;
  retiringSecretHash: string | null;
  clusterSecretHash: string;
  /** Settings every node shares (plans, webhook policy), as `gateway init` wrote them. */
  settings: Record<string, unknown>;
}

export async function readGateway(db: Db): Promise<GatewayRow | null> {
  const { rows } = await db.query<{ server_secret_hash: string | null; retiring_secret_hash: string | null; cluster_secret_hash: string; settings: Record<string, unknown> }>(
    'the gateway record',
    'SELECT server_secret_hash, retiring_secret_hash, cluster_secret_hash, settings FROM gateway WHERE id = 1',
  );
  const r = rows[0];
  return r ? { serverSecretHash: r.server_secret_hash, retiringSecretHash: r.retiring_secret_hash, clusterSecretHash: r.cluster_secret_hash, settings: r.settings } : null;
}

/** A new cluster secret: node-to-node calls carry it. */
export function generateClusterSecret(): string {
  return `gw_cluster_${generateServerSecret().slice('gw_secret_'.length)}`;
}

/**
 * Creates the gateway in an empty database (the server secret's and the cluster secret's hashes,
 * the shared settings), or joins the one it holds: then `clusterSecret` must be its secret (a
 * wrong one is refused). Returns what to show once: the secrets when it created the gateway.
 */
export async function createOrJoinGateway(
  db: Db,
  options: { clusterSecret: string | null; settings: Record<string, unknown> },
): Promise<{ created: true; serverSecret: string; clusterSecret: string } | { created: false; clusterSecret: string }> {
  const existing = await readGateway(db);
  if (existing) {
    if (options.clusterSecret === null) {
      throw new GatewayError('CONFLICT', 'this database already holds a gateway: join it with --cluster-secret S (env GATEWAY_CLUSTER_SECRET), the secret `gateway init --database` printed when it created it');
    }
    if (!verifySecret(options.clusterSecret, existing.clusterSecretHash)) throw new GatewayError('UNAUTHORIZED', 'the cluster secret is not this gateway\'s');
    return { created: false, clusterSecret: options.clusterSecret };
  }
  const serverSecret = generateServerSecret();
  const clusterSecret = options.clusterSecret ?? generateClusterSecret();
  const { rowCount } = await db.query(
    'the gateway record',
    'INSERT INTO gateway (id, server_secret_hash, cluster_secret_hash, settings) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING',
    [hashSecret(serverSecret), hashSecret(clusterSecret), JSON.stringify(options.settings)],
  );
  // Another node created it at the same moment: join that one instead.
  if (rowCount === 0) return createOrJoinGateway(db, options);
  return { created: true, serverSecret, clusterSecret };
}
