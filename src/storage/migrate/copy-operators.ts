import type { OperatorRepository } from '../ports/operators.js';
import type { Db } from '../postgres/db.js';

/**
 * The operators (named panel accounts, gateway-wide), each as the PostgreSQL engine keeps it (one
 * row, its record as `doc`, see postgres/operators.ts): role, instances, scrypt hash and times, so
 * every operator signs in on any node with the password it had. A resumed run writes them again;
 * rows of operators the files no longer hold are removed.
 */
export async function copyOperators(db: Db, from: OperatorRepository): Promise<number> {
  const operators = await from.list();
  const names = operators.map((o) => o.name);
  await db.query(
    'operators',
    `WITH gone AS (DELETE FROM operators WHERE NOT (name = ANY ($1::text[])))
    INSERT INTO operators (name, doc) SELECT * FROM unnest($1::text[], $2::jsonb[])
    ON CONFLICT (name) DO UPDATE SET doc = excluded.doc`,
    [names, operators.map((o) => JSON.stringify(o))],
  );
  return operators.length;
}
