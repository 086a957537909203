import type { SessionStore, StoredSession } from '../ports/sessions.js';
import type { Db } from './db.js';

/** How often activity (last seen) is written: a session idles out in hours, not seconds. */
const TOUCH_FLUSH_MS = 5_000;

/** Panel sessions in PostgreSQL: one row per session, activity written in batches. */
export class PgSessions implements SessionStore {
  private readonly touched = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly db: Db) {}

  async put(s: StoredSession): Promise<void> {
    const { lastSeen, ...doc } = s;
    await this.db.query('panel sessions', 'INSERT INTO panel_sessions (key, principal, doc, last_seen) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO UPDATE SET doc = $3, last_seen = $4', [
      s.key,
      s.principal,
      JSON.stringify(doc),
      lastSeen,
    ]);
  }

  async get(key: string): Promise<StoredSession | null> {
    const { rows } = await this.db.query<{ doc: Omit<StoredSession, 'lastSeen'>; last_seen: number }>('panel sessions', 'SELECT doc, last_seen FROM panel_sessions WHERE key = $1', [key]);
    const r = rows[0];
    if (!r) return null;
    return { ...r.doc, lastSeen: Math.max(r.last_seen, this.touched.get(key) ?? 0) };
  }

  touch(key: string, lastSeen: number): void {
    this.touched.set(key, lastSeen);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, TOUCH_FLUSH_MS);
    this.timer.unref();
  }

  private async flush(): Promise<void> {
    const batch = [...this.touched];
    this.touched.clear();
    if (batch.length === 0) return;
    await this.db
      .query('panel sessions', 'UPDATE panel_sessions p SET last_seen = greatest(p.last_seen, u.seen) FROM unnest($1::text[], $2::bigint[]) AS u(key, seen) WHERE p.key = u.key', [batch.map(([k]) => k), batch.map(([, v]) => v)], true)
      .catch(() => undefined);
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.touched.delete(k);
    if (keys.length > 0) await this.db.query('panel sessions', 'DELETE FROM panel_sessions WHERE key = ANY ($1::text[])', [keys]);
  }

  async ofPrincipal(principal: string): Promise<StoredSession[]> {
    const { rows } = await this.db.query<{ doc: Omit<StoredSession, 'lastSeen'>; last_seen: number }>('panel sessions', 'SELECT doc, last_seen FROM panel_sessions WHERE principal = $1', [principal]);
    return rows.map((r) => ({ ...r.doc, lastSeen: r.last_seen }));
  }

  async sweep(before: number): Promise<void> {
    // Activity not written yet counts.
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
    await this.db.query('panel sessions', 'DELETE FROM panel_sessions WHERE last_seen < $1', [before], true);
  }
}
