/**
 * Checked right before every commit of a write (rename, create, append): throws when this process
 * no longer holds the data dir lock (it stalled and another process took over), so it never
 * writes what it read before. The lock itself is the guard of the daemon or CLI command holding it
 * (storage/files/owner-lock.ts); each store is given its guard, so two daemons in one process (on
 * two data dirs) never check each other's lock.
 */
export interface WriteGuard {
  assertHeld(): void;
}

/** For stores that no lock protects (tests, tools that own their directory alone). */
export const UNGUARDED: WriteGuard = { assertHeld: () => undefined };
