import { LOCK_NAMESPACE } from './migrate.js';

// The session's names and SQL without pg itself: the cluster feature is part of every daemon (and
// of every CLI command that builds one offline) and must not load pg on the files engine.

/** The channel every change of shared state is announced on: `<session>:<kind>:<instanceId>`. */
export const CHANGES = 'gw_changes';
/** The advisory lock class each process's session holds while it lives. */
export const SESSION_LOCK = LOCK_NAMESPACE + 1;

/** The SQL that lists the sessions alive now (their process still holds its lock). */
export const LIVE_SESSIONS = `SELECT objid::bigint AS session FROM pg_locks
  WHERE locktype = 'advisory' AND classid = ${SESSION_LOCK}::oid AND objsubid = 2 AND granted
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
