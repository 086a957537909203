/**
 * The credit batch (gw_credit_batch, migration 001) plans its five statements once per session
 * instead of at every call. The gateway's connections run with `plan_cache_mode =
 * force_custom_plan` (db.ts says why: a generic plan made on a new database's empty tables can read
 * a whole instance), and that setting also governs the statements inside a PL/pgSQL function: each
 * call planned all five again. They read and write by primary key (credit_holds by instance,
 * session and hold number; credits by instance), which no statistics can turn into a scan, so the
 * function runs with PostgreSQL's default (`auto`: custom plans for five calls, then the generic
 * plan when it costs no more). The credit batch was the largest part of PostgreSQL's time a send
 * (log_min_duration_statement, bench/pg-diag.ts MODE=phones: 0.53 ms a call, ~40 µs a send).
 */
export const sql = `
ALTER FUNCTION gw_credit_batch(text, integer, bigint[], bigint[], bigint[]) SET plan_cache_mode = auto;
`;
