import type { OperatorRecord, OperatorRepository } from '../ports/operators.js';
import type { Db } from './db.js';

/** Operators in PostgreSQL: one row each, read from the database every time (every node sees a reset at once). */
export class PgOperators implements OperatorRepository {
  constructor(private readonly db: Db) {}

  async list(): Promise<OperatorRecord[]> {
    const { rows } = await this.db.query<{ doc: OperatorRecord }>('operators', 'SELECT doc FROM operators ORDER BY name COLLATE "C"');
    return rows.map((r) => r.doc);
  }

  async get(name: string): Promise<OperatorRecord | null> {
    const { rows } = await this.db.query<{ doc: OperatorRecord }>('operators', 'SELECT doc FROM operators WHERE name = $1', [name]);
    return rows[0]?.doc ?? null;
  }

  async create(record: OperatorRecord): Promise<boolean> {
    const { rowCount } = await this.db.query('operators', 'INSERT INTO operators (name, doc) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [record.name, JSON.stringify(record)]);
    return rowCount === 1;
  }

  async setPassword(name: string, passwordHash: string, at: string): Promise<OperatorRecord | null> {
    const { rows } = await this.db.query<{ doc: OperatorRecord }>(
      'operators',
      `UPDATE operators SET doc = doc || jsonb_build_object('passwordHash', $2::text, 'passwordChangedAt', $3::text) WHERE name = $1 RETURNING doc`,
      [name, passwordHash, at],
    );
    return rows[0]?.doc ?? null;
  }

  async remove(name: string): Promise<boolean> {
    const { rowCount } = await this.db.query('operators', 'DELETE FROM operators WHERE name = $1', [name]);
    return rowCount === 1;
  }
}
