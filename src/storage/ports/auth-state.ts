/**
 * A WhatsApp session's stored state: the account's credentials and its Signal key tables, as JSON
 * text (the connection layer owns the encoding: Baileys' BufferJSON). An engine stores a snapshot
 * as one consistent moment, so creds never point at keys that were not stored with them.
 */
export interface AuthSnapshot {
  /** The creds, as JSON. */
  creds: string;
  /**
   * Every key table, by type: `json()` gives its JSON (called only for what the engine writes),
   * `changed` whether it changed since the last write that succeeded.
   */
  tables: ReadonlyArray<AuthTable>;
  /** Whether the creds hold a linked account (a phone is paired). */
  paired: boolean;
}

/** One key table of a snapshot. */
export interface AuthTable {
  type: string;
  changed: boolean;
  json(): string;
  /**
   * The same JSON as UTF-8 bytes, when the writer holds it so: a session thread hands its tables
   * over as bytes (moved, not copied, between threads), and an engine that writes bytes never makes
   * them a string on the daemon's thread (connection/threads/session-threads.ts).
   */
  bytes?(): Uint8Array;
}

/**
 * The connection layer's decoding of a parsed JSON document (Baileys' buffers), applied to the
 * creds and to each key table once they are parsed. A walk after JSON.parse, not a JSON.parse
 * reviver: V8's reviver path alone cost 3.5-5 ms a 166 KB auth file, a plain parse 1.9 ms.
 */
export type Revive = (parsed: unknown) => unknown;

/** A stored state, parsed (and revived, when asked). */
export interface StoredAuth {
  creds: unknown;
  keys: Record<string, unknown>;
}

export interface AuthStateRepository {
  /**
   * The stored state of an instance, or null when it has none. Throws STORE_CORRUPT when it exists
   * but cannot be read: pairing afresh over it would lose the session (that is a human decision).
   */
  read(instanceId: string, revive?: Revive): Promise<StoredAuth | null>;
  /**
   * Stores a snapshot (replacing the previous one whole, or the tables that changed). `epoch`: the
   * lease epoch its writer started under (an engine several nodes share refuses the write, as
   * INSTANCE_MOVING, unless this node still holds that epoch; see src/connection/lease-epoch.ts).
   */
  write(instanceId: string, snapshot: AuthSnapshot, options?: { epoch?: number }): Promise<void>;
  /** Forgets the session (logout, delete): also a state that cannot be read. */
  remove(instanceId: string): Promise<void>;
  /** Whether a phone is paired (a linked account is stored), without loading the state. */
  isPaired(instanceId: string): Promise<boolean>;
}
