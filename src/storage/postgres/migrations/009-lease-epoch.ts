/**
 * Fencing by epoch (issue 23 item 2: "every write for an instance carries its lease epoch"). The
 * per-row trigger (migrations 003 and 008) refuses a node that does not hold an instance's
 * unexpired lease; it cannot tell one tenure of a node from the next. A node that lost a lease and
 * took it back (epoch 5, then 7) could still store a write its old connection made under 5: stale
 * Signal keys over the ones the other node wrote meanwhile, and the phone stops decrypting.
 *
 * `gw_fence(instance, epoch)` is called by a statement that carries the epoch its writer started
 * under (the WhatsApp auth state: each connection stamps its writes with the epoch its node held
 * when it opened it, see src/connection/lease-epoch.ts). It refuses (GW001, as the trigger) unless
 * this node holds that very epoch, unexpired; then it leaves the trigger's memo (migration 008) so
 * the statement's rows cost the trigger a comparison. A null epoch claims nothing beyond owner and
 * expiry; a connection without a node id (tools, a data dir migration) writes freely.
 *
 * The row trigger (gw_fenced) keeps its memo and asks gw_fence for the rest: one rule, in one
 * function, for both.
 */
export const sql = `
CREATE FUNCTION gw_fence(inst text, ep bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  me text := current_setting('gw.node', true);
BEGIN
  IF me IS NULL OR me = '' THEN
    RETURN true;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM leases WHERE instance_id = inst AND owner_node = me AND (ep IS NULL OR epoch = ep) AND expires_at > now()) THEN
    RAISE EXCEPTION 'stale lease: node % does not hold the lease of % (epoch %)', me, inst, COALESCE(ep::text, 'any') USING ERRCODE = 'GW001';
  END IF;
  PERFORM set_config('gw.fenced', statement_timestamp()::text || ' ' || inst, true);
  RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION gw_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('gw.fenced', true) = statement_timestamp()::text || ' ' || NEW.instance_id THEN
    RETURN NEW;
  END IF;
  PERFORM gw_fence(NEW.instance_id, NULL);
  RETURN NEW;
END
$$;
`;
