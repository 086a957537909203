import type { InstanceRecord, InstancesDoc } from '../../schemas/instance.js';
import type { Db } from '../postgres/db.js';

/**
 * The instance's record as the PostgreSQL engine keeps it (`instances.doc`, the same document the
 * files engine keeps in instances.json: name, owner, key hash, plan, webhook and its secret), so
 * its API key keeps working. Written again on a resumed run (a new version, as every write).
 */
export async function copyInstance(db: Db, record: InstanceRecord): Promise<void> {
  await db.query(
    'instances',
    'INSERT INTO instances AS i (instance_id, doc) VALUES ($1, $2) ON CONFLICT (instance_id) DO UPDATE SET doc = excluded.doc, version = i.version + 1',
    [record.id, record],
  );
}

/** The owners' one-time trial records (an owner keeps having had it, also after deleting that instance). */
export async function copyOwners(db: Db, owners: InstancesDoc['owners']): Promise<number> {
  const names = Object.keys(owners);
  if (names.length === 0) return 0;
  await db.query(
    'owners',
    `INSERT INTO owners (owner, trial_instance_id, trial_granted_at) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
    ON CONFLICT (owner) DO UPDATE SET trial_instance_id = excluded.trial_instance_id, trial_granted_at = excluded.trial_granted_at`,
    [names, names.map((o) => owners[o]!.trialInstanceId), names.map((o) => owners[o]!.trialGrantedAt)],
  );
  return names.length;
}

/**
 * Balance and spent. No hold is copied: a hold in the files is a send a stop interrupted, which the
 * files engine would release at its next start (never charged), and the balance counts it already.
 */
export async function copyCredits(db: Db, instanceId: string, credits: { balance: number; spent: number }): Promise<void> {
  await db.query(
    'credits',
    `WITH h AS (DELETE FROM credit_holds WHERE instance_id = $1)
    INSERT INTO credits (instance_id, balance, spent, held) VALUES ($1, $2, $3, 0)
    ON CONFLICT (instance_id) DO UPDATE SET balance = excluded.balance, spent = excluded.spent, held = 0`,
    [instanceId, credits.balance, credits.spent],
  );
}
