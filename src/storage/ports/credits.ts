/** An instance's credits: `balance` counts every credit not yet spent, including held ones. */
export interface CreditsDoc {
  balance: number;
  /** Lifetime credits spent, for metrics and support. */
  spent: number;
}

/** A credit reserved for one send: stored before the message leaves. */
export interface CreditHold {
  readonly instanceId: string;
  /** Debits the held credit durably; resolves with the balance after this send. */
  commit(): Promise<number>;
  /** The send did not happen: the credit is free again. */
  release(): void;
}

/**
 * Credit balances, exact: a hold is stored before its message leaves and becomes a debit after it
 * was sent; a hold whose send's outcome a crash hid is released at the next start (the customer is
 * never charged for it). Balances are read synchronously from what the engine keeps in memory.
 */
export interface CreditRepository {
  /** Loads and checks the accounts of these instances; a corrupt one throws STORE_CORRUPT naming it. */
  open(ids: Iterable<string>): Promise<void>;
  /** Credits not spent, including those held by sends in flight: what status shows. */
  balance(id: string): number;
  /** Credits a new send may hold now. */
  available(id: string): number;
  /**
   * Reserves one credit and stores the hold; null when none is free. Rejects with
   * STORAGE_UNAVAILABLE when the hold cannot be stored (the send must not go out).
   */
  hold(id: string): Promise<CreditHold | null>;
  /**
   * Adds credits (a negative amount refunds, down to what is not held: 409 INSUFFICIENT_CREDITS
   * below it); resolves with the new balance once durable.
   */
  add(id: string, amount: number): Promise<CreditsDoc>;
  /**
   * The instance is being deleted: no new holds; resolves once every send in flight settled and
   * its writes are stored (at most `waitMs`).
   */
  forget(id: string, waitMs?: number): Promise<void>;
  /**
   * This process starts running the instance (several hosts: it moved here): re-read its account,
   * which other processes changed meanwhile, releasing holds of processes that are gone.
   */
  refresh?(id: string): Promise<void>;
  /** Removes what is stored for a deleted instance. */
  remove(id: string): Promise<void>;
  /** Writes what is queued (holds taken in advance are given back) and closes. */
  close(): Promise<void>;
}
