/**
 * Fencing (migration 003) looked up once per statement and instance instead of once per row. A
 * statement that writes a batch of one instance's rows (group-writes.ts) ran the lease lookup for
 * each row: ~55 µs of PostgreSQL's CPU a row, about a third of a batched send's cost. The trigger
 * now remembers, for the rest of the statement, the last instance whose lease it found held (a
 * transaction-local setting keyed by the statement's start time and the instance), so the other
 * rows of that instance in the statement cost a comparison. Same rule, same error: a node that does
 * not hold an instance's unexpired lease writes nothing (the statement fails with GW001);
 * connections without a node id write freely.
 *
 * Per-row triggers stay (rather than statement triggers over transition tables, which batched as
 * well): statements of one row, the common case when an instance's writes do not pile up, cost
 * more with a transition table. PostgreSQL's CPU per send with one client (`CONN=1
 * bench/pg-diag.ts`): 1,795 µs with transition tables, 1,634 to 1,687 µs with migration 003's
 * lookup per row, 1,698 to 1,737 µs with this one; with 50 clients, 145 to 155 µs with either of
 * the batched forms.
 */
export const sql = `
CREATE OR REPLACE FUNCTION gw_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me text := current_setting('gw.node', true);
  seen text;
BEGIN
  IF me IS NULL OR me = '' THEN
    RETURN NEW;
  END IF;
  seen := statement_timestamp()::text || ' ' || NEW.instance_id;
  IF current_setting('gw.fenced', true) = seen THEN
    RETURN NEW;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM leases WHERE instance_id = NEW.instance_id AND owner_node = me AND expires_at > now()) THEN
    RAISE EXCEPTION 'stale lease: node % does not hold the lease of %', me, NEW.instance_id USING ERRCODE = 'GW001';
  END IF;
  PERFORM set_config('gw.fenced', seen, true);
  RETURN NEW;
END
$$;
`;
