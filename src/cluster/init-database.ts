import { pino } from 'pino';
import { Db } from '../storage/postgres/db.js';
import { pgError } from '../storage/postgres/errors.js';
import { migrate } from '../storage/postgres/migrate.js';
import { createOrJoinGateway } from './gateway-record.js';

/**
 * `gateway init --database URL`: brings the database's schema up to date and creates the gateway
 * there (one per database), or joins the one it holds (then `clusterSecret` must be its secret).
 */
export async function initDatabase(
  url: string,
  options: { clusterSecret: string | null; settings: Record<string, unknown> },
): ReturnType<typeof createOrJoinGateway> {
  const db = new Db({ url, logger: pino({ level: 'silent' }), poolSize: 2, lazyPoolSize: 1 });
  try {
    const client = await db.pool.connect().catch((err: unknown) => {
      throw pgError(err, 'opening the database');
    });
    try {
      await migrate(client);
    } finally {
      client.release();
    }
    return await createOrJoinGateway(db, options);
  } finally {
    await db.end();
  }
}
