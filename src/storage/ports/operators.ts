/** What an operator may do: an admin sees everything; an agent the inbox, chats and status of its instances. */
export type OperatorRole = 'admin' | 'agent';

/** A named panel account, as stored: never the password, only its scrypt hash. */
export interface OperatorRecord {
  /** Unique, 1 to 64 of letters, digits, ".", "_", "-", "@"; compared exactly. */
  name: string;
  role: OperatorRole;
  /** The instances an agent works on (empty for an admin). */
  instances: string[];
  /** `scrypt$N$r$p$salt$hash` (src/domain/passwords.ts). */
  passwordHash: string;
  /** ISO times. */
  createdAt: string;
  passwordChangedAt: string;
}

/**
 * Operator accounts. Few and rarely written; reads are asynchronous (a shared engine reads the
 * database, so a password reset on one node is seen by the next request on every node). Writes
 * resolve once durable.
 */
export interface OperatorRepository {
  /** Every operator, by name. */
  list(): Promise<OperatorRecord[]>;
  get(name: string): Promise<OperatorRecord | null>;
  /** Stores a new operator; false (nothing written) when the name is taken. */
  create(record: OperatorRecord): Promise<boolean>;
  /** A new password hash; null for an unknown name. */
  setPassword(name: string, passwordHash: string, at: string): Promise<OperatorRecord | null>;
  /** False for an unknown name. */
  remove(name: string): Promise<boolean>;
}
