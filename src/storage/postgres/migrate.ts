import type pg from 'pg';
import { GatewayError } from '../../domain/errors.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** Advisory lock keys of the gateway (two int4 keys: this namespace, then what is locked). */
export const LOCK_NAMESPACE = 1_735_851_777;
const MIGRATIONS_LOCK = 1;

/**
 * Brings the schema up to date at start-up: every migration not applied yet, in order, each in
 * its own transaction with its row in `schema_migrations`, under an advisory lock so nodes that
 * start together apply each once (the others wait, then find nothing to do). A database whose
 * schema is newer than this gateway knows is refused (an older node must not write to it).
 *
 * Why not node-pg-migrate: it loads migrations from a folder at run time (glob, and jiti for
 * TypeScript files), while the gateway ships as one esbuild bundle (scripts/bundle.mjs); the SQL
 * here is part of the code, so the bundle carries it. Its CLI (yargs) and down-migrations are not
 * needed; what is needed is these 40 lines.
 */
export async function migrate(client: pg.ClientBase, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_NAMESPACE, MIGRATIONS_LOCK]);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    const applied = new Set(rows.map((r) => r.version));
    const known = Math.max(0, ...migrations.map((m) => m.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) {
      throw new GatewayError('STORE_CORRUPT', `the database schema is at version ${newest}, newer than this gateway knows (${known}): upgrade this gateway before it uses the database`, {
        publicMessage: 'the database was set up by a newer gateway version',
      });
    }
    const done: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
      done.push(m.version);
    }
    return done;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_NAMESPACE, MIGRATIONS_LOCK]).catch(() => undefined);
  }
}
