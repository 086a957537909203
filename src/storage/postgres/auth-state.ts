import { GatewayError, errorMessage } from '../../domain/errors.js';
import type { AuthSnapshot, AuthStateRepository, Revive, StoredAuth } from '../ports/auth-state.js';
import type { Db } from './db.js';

/** A stored session that cannot be used; pairing afresh over it would lose it. */
function corruptAuth(instanceId: string, detail: string): GatewayError {
  return new GatewayError(
    'STORE_CORRUPT',
    `the stored credentials of ${instanceId} are unreadable (${detail}); refusing to start a new pairing over them. Restore them from a backup, or log the instance out to pair again.`,
    { publicMessage: 'the stored WhatsApp credentials of this instance are unreadable and were left untouched; log the instance out to pair again' },
  );
}

/**
 * Auth state in PostgreSQL: the creds (with the paired mark) in one row, each Signal key table in
 * a row of its own. A snapshot is one statement, so one transaction: the creds and the tables that
 * changed are written, tables no longer in the snapshot deleted, and a reader (one statement too)
 * sees one moment of them.
 */
export class PgAuthStates implements AuthStateRepository {
  constructor(private readonly db: Db) {}

  async read(instanceId: string, revive: Revive = (v) => v): Promise<StoredAuth | null> {
    const { rows } = await this.db.query<{ creds: string; type: string | null; data: string | null }>(
      'auth store',
      'SELECT c.creds, k.type, k.data FROM auth_creds c LEFT JOIN auth_keys k ON k.instance_id = c.instance_id WHERE c.instance_id = $1',
      [instanceId],
    );
    if (rows.length === 0) return null;
    const parse = (text: string, what: string): unknown => {
      try {
        return revive(JSON.parse(text));
      } catch (err) {
        throw corruptAuth(instanceId, `${what} is not valid JSON: ${errorMessage(err)}`);
      }
    };
    const creds = parse(rows[0]!.creds, 'creds');
    if (typeof creds !== 'object' || creds === null) throw corruptAuth(instanceId, 'creds are not a JSON object');
    const keys: Record<string, unknown> = {};
    for (const r of rows) {
      if (r.type === null || r.data === null) continue;
      const table = parse(r.data, `key table ${r.type}`);
      if (typeof table !== 'object' || table === null) throw corruptAuth(instanceId, `key table ${r.type} is not a JSON object`);
      keys[r.type] = table;
    }
    return { creds, keys };
  }

  async write(instanceId: string, snapshot: AuthSnapshot, options: { epoch?: number } = {}): Promise<void> {
    const changed = snapshot.tables.filter((t) => t.changed);
    // gw_fence (migration 009) runs before any row is written: the creds' insert reads from it, and
    // a refusal fails the whole statement, the deletion of dropped key tables included (deletes
    // are not fenced by the trigger).
    await this.db.query(
      'auth store',
      `WITH f AS (SELECT gw_fence($1, $7::bigint) AS ok),
        c AS (INSERT INTO auth_creds (instance_id, creds, paired) SELECT $1, $2, $3 FROM f WHERE f.ok
          ON CONFLICT (instance_id) DO UPDATE SET creds = excluded.creds, paired = excluded.paired),
        k AS (INSERT INTO auth_keys (instance_id, type, data) SELECT $1, t, d FROM f, unnest($4::text[], $5::text[]) AS x(t, d) WHERE f.ok
          ON CONFLICT (instance_id, type) DO UPDATE SET data = excluded.data)
      DELETE FROM auth_keys WHERE instance_id = $1 AND NOT (type = ANY ($6::text[])) AND (SELECT ok FROM f)`,
      [instanceId, snapshot.creds, snapshot.paired, changed.map((t) => t.type), changed.map((t) => t.json()), snapshot.tables.map((t) => t.type), options.epoch ?? null],
    );
  }

  async remove(instanceId: string): Promise<void> {
    await this.db.query('auth store', 'WITH k AS (DELETE FROM auth_keys WHERE instance_id = $1) DELETE FROM auth_creds WHERE instance_id = $1', [instanceId]);
  }

  async isPaired(instanceId: string): Promise<boolean> {
    const { rows } = await this.db.query<{ paired: boolean }>('auth store', 'SELECT paired FROM auth_creds WHERE instance_id = $1', [instanceId]);
    return rows[0]?.paired ?? false;
  }
}
