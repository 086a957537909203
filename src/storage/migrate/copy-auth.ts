import type { AuthStateRepository } from '../ports/auth-state.js';
import { PgAuthStates } from '../postgres/auth-state.js';
import type { Db } from '../postgres/db.js';

/** What was copied of a WhatsApp session. */
export interface AuthCopied {
  creds: 0 | 1;
  tables: number;
  paired: boolean;
}

/**
 * An instance's WhatsApp session, through the PostgreSQL engine's own writer: the creds in one row
 * and each Signal key table in a row of its own, each the JSON the files engine's auth file holds
 * for it, with its paired mark; so the device logs in on any node as it did here (no QR). A session
 * of versions before the auth port (a sandbox's pairing file) becomes the sandbox's paired creds.
 */
export async function copyAuth(db: Db, from: AuthStateRepository, instanceId: string, now: number): Promise<AuthCopied> {
  const to = new PgAuthStates(db);
  // Not revived: Baileys' buffers stay `{"type":"Buffer","data":…}`, so the JSON is the same text again.
  const stored = await from.read(instanceId);
  const paired = await from.isPaired(instanceId);
  if (!stored) {
    if (!paired) {
      await to.remove(instanceId);
      return { creds: 0, tables: 0, paired: false };
    }
    await to.write(instanceId, { creds: JSON.stringify({ sandbox: true, pairedAt: new Date(now).toISOString() }), tables: [], paired: true });
    return { creds: 1, tables: 0, paired: true };
  }
  const tables = Object.entries(stored.keys).map(([type, table]) => ({ type, changed: true, json: () => JSON.stringify(table) }));
  await to.write(instanceId, { creds: JSON.stringify(stored.creds), tables, paired });
  return { creds: 1, tables: tables.length, paired };
}
