/** A panel session as stored: never the cookie's token, only its hash. */
export interface StoredSession {
  /** SHA-256 of the cookie token (base64url). */
  key: string;
  sessionId: string;
  csrf: string;
  /** Whose it is: `admin`, `instance:<id>`, `operator:<name>` (the per-principal bound). */
  principal: string;
  /** Who signed in (role and scope), as the panel keeps it. */
  who: Record<string, unknown>;
  /** The credential it was opened with: rotating that one ends the session. */
  credentialHash: string;
  /** Epoch ms. */
  lastSeen: number;
}

/**
 * Panel sessions. The files engine keeps them in memory (a restart signs everyone out); a shared
 * engine keeps them where every node sees them, so a browser signed in on one node is signed in on
 * all. Activity (`touch`) may be written lazily.
 */
export interface SessionStore {
  put(session: StoredSession): Promise<void>;
  get(key: string): Promise<StoredSession | null>;
  /** A later request of the session (may be stored lazily). */
  touch(key: string, lastSeen: number): void;
  remove(keys: readonly string[]): Promise<void>;
  /** Every session of one principal (to keep it within its bound). */
  ofPrincipal(principal: string): Promise<StoredSession[]>;
  /** Removes sessions idle since before `before` (epoch ms). */
  sweep(before: number): Promise<void>;
}

/** Sessions in this process only: what the files engine (one host) needs. */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, StoredSession>();

  async put(session: StoredSession): Promise<void> {
    this.sessions.set(session.key, { ...session });
  }

  async get(key: string): Promise<StoredSession | null> {
    const s = this.sessions.get(key);
    return s ? { ...s } : null;
  }

  touch(key: string, lastSeen: number): void {
    const s = this.sessions.get(key);
    if (s) s.lastSeen = lastSeen;
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.sessions.delete(k);
  }

  async ofPrincipal(principal: string): Promise<StoredSession[]> {
    return [...this.sessions.values()].filter((s) => s.principal === principal).map((s) => ({ ...s }));
  }

  async sweep(before: number): Promise<void> {
    for (const [k, s] of this.sessions) if (s.lastSeen < before) this.sessions.delete(k);
  }
}
