/**
 * Fencing (migration 003) checked once per statement instead of once per row: each fenced table's
 * triggers read the rows a statement inserted or updated (a transition table) and look up the
 * lease of each instance among them once. The per-row trigger cost ~55 µs of PostgreSQL's CPU per
 * row written (a debited send writes three: its hold, its message, its status), and a statement
 * that writes a batch of rows now pays for one lookup per instance. Same rule, same error: a node
 * that does not hold an instance's unexpired lease writes nothing (the whole statement fails with
 * GW001); connections without a node id write freely.
 *
 * Transition tables need one trigger per event (INSERT, UPDATE), both AFTER ... FOR EACH STATEMENT:
 * the statement's rows are written by then, and the exception undoes them.
 */
const FENCED = ['messages', 'media', 'auth_creds', 'auth_keys', 'credit_holds', 'handovers', 'conversations', 'deliveries'] as const;

export const sql = `
CREATE FUNCTION gw_fenced_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me text := current_setting('gw.node', true);
  stale text;
BEGIN
  IF me IS NULL OR me = '' THEN
    RETURN NULL;
  END IF;
  SELECT w.instance_id INTO stale FROM (SELECT DISTINCT instance_id FROM gw_written) w
  WHERE NOT EXISTS (SELECT 1 FROM leases l WHERE l.instance_id = w.instance_id AND l.owner_node = me AND l.expires_at > now())
  LIMIT 1;
  IF stale IS NOT NULL THEN
    RAISE EXCEPTION 'stale lease: node % does not hold the lease of %', me, stale USING ERRCODE = 'GW001';
  END IF;
  RETURN NULL;
END
$$;
${FENCED.map(
  (t) => `
DROP TRIGGER ${t}_fenced ON ${t};
CREATE TRIGGER ${t}_fenced_insert AFTER INSERT ON ${t} REFERENCING NEW TABLE AS gw_written FOR EACH STATEMENT EXECUTE FUNCTION gw_fenced_rows();
CREATE TRIGGER ${t}_fenced_update AFTER UPDATE ON ${t} REFERENCING NEW TABLE AS gw_written FOR EACH STATEMENT EXECUTE FUNCTION gw_fenced_rows();`,
).join('\n')}
`;
