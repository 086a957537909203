import { pino } from 'pino';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { Db } from '../postgres/db.js';
import { migrate } from '../postgres/migrate.js';

/** A database URL as it may be shown: the password, if any, masked. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '****';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** Refuses what is not a PostgreSQL URL, naming the option. */
export function checkTargetUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new GatewayError('USAGE', '--to: expected a PostgreSQL URL like postgres://user:password@host:5432/database');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') throw new GatewayError('USAGE', `--to: expected a postgres:// URL (got ${u.protocol}//...)`);
  if (u.pathname.length <= 1) throw new GatewayError('USAGE', '--to: the URL names no database (postgres://user@host:5432/DATABASE)');
}

/** Why a connection failed, in words an operator acts on. */
function whyNot(err: unknown, url: string): string {
  const code = (err as { code?: unknown } | null)?.code;
  const u = new URL(url);
  const where = `${u.hostname}:${u.port || '5432'}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${where} (is PostgreSQL running there, on that port?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host ${u.hostname} is not known`;
    case 'ETIMEDOUT':
      return `${where} does not answer (a firewall?)`;
    case '3D000':
      return `the database ${decodeURIComponent(u.pathname.slice(1))} does not exist on ${where} (create it first: createdb ${decodeURIComponent(u.pathname.slice(1))})`;
    case '28P01':
    case '28000':
      return `${where} refused the user ${decodeURIComponent(u.username) || '(default)'} (${errorMessage(err)})`;
    default:
      return errorMessage(err);
  }
}

/**
 * Connects to the target database (without a node id: its writes are not fenced by leases) and
 * brings its schema up to date. A target that cannot be reached is one clear error naming the URL
 * (password masked) and why.
 */
export async function openTarget(url: string): Promise<Db> {
  checkTargetUrl(url);
  const db = new Db({ url, logger: pino({ level: 'silent' }), poolSize: 4, lazyPoolSize: 1 });
  try {
    const client = await db.pool.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
    return db;
  } catch (err) {
    await db.end().catch(() => undefined);
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('STORAGE_UNAVAILABLE', `cannot use the target database ${redactUrl(url)}: ${whyNot(err, url)}; nothing was copied`, { cause: err });
  }
}
