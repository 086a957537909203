import pg from 'pg';
import { MIGRATIONS } from '../storage/postgres/migrations/index.js';
import type { CheckResult } from './types.js';

/** The oldest PostgreSQL the gateway runs on. */
const MIN_SERVER_VERSION = 150000;

/**
 * Several hosts: whether the database in `storage.postgres.url` is reachable, new enough, holds a
 * gateway and has every migration this gateway knows (a daemon applies them at start; fewer is a
 * warning, more means the database belongs to a newer gateway). Reads only.
 */
export async function checkDatabase(url: string | null, timeoutMs = 5_000): Promise<CheckResult> {
  if (url === null) return { name: 'database', status: 'ok', message: 'not used (files in the data dir)' };
  const where = safeUrl(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, application_name: 'wa-gateway doctor' });
  try {
    await client.connect();
  } catch (err) {
    return { name: 'database', status: 'fail', message: `cannot connect to ${where} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, fix: 'check storage.postgres.url (or GATEWAY_DATABASE_URL), that PostgreSQL runs and accepts this user' };
  }
  try {
    const version = Number((await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]?.v ?? 0);
    if (version < MIN_SERVER_VERSION) return { name: 'database', status: 'fail', message: `${where}: PostgreSQL ${version} is older than 15`, fix: 'upgrade PostgreSQL to 15 or newer' };
    const hasTable = (await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)).rows[0]?.t;
    if (!hasTable) return { name: 'database', status: 'fail', message: `${where}: no gateway schema`, fix: 'run `gateway init --database URL` (a daemon also migrates at start)' };
    const applied = (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version));
    const known = Math.max(...MIGRATIONS.map((m) => m.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) return { name: 'database', status: 'fail', message: `${where}: schema ${newest} is newer than this gateway knows (${known})`, fix: 'upgrade this gateway before it uses the database' };
    const gateway = (await client.query('SELECT 1 FROM gateway WHERE id = 1').catch(() => ({ rowCount: 0 }))).rowCount ?? 0;
    if (gateway === 0) return { name: 'database', status: 'fail', message: `${where}: holds no gateway`, fix: 'run `gateway init --database URL`' };
    const missing = MIGRATIONS.filter((m) => !applied.includes(m.version)).map((m) => m.version);
    if (missing.length > 0) return { name: 'database', status: 'warn', message: `${where}: PostgreSQL ${Math.floor(version / 10000)}, migrations ${missing.join(', ')} not applied yet`, fix: 'start a daemon: it applies them under a lock' };
    return { name: 'database', status: 'ok', message: `${where}: PostgreSQL ${Math.floor(version / 10000)}, schema ${newest} (current)` };
  } catch (err) {
    return { name: 'database', status: 'fail', message: `${where}: ${(err as Error).message}` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL without its password, for a report. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return 'the database URL';
  }
}
