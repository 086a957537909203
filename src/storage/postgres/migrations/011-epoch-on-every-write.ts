/**
 * Every write of an instance's owner carries its lease epoch (issue 23 item 2), not only the
 * WhatsApp auth state's (migration 009). Migration 003's row trigger refuses a node that does not
 * hold an instance's unexpired lease, but cannot tell one tenure of a node from the next: a node
 * that lost an instance and took it back (epoch 5, then 7) could still store a write made under 5
 * (a message batch or a deferred `pending` row held back while the lease moved, a webhook delivery's
 * outcome, a flow position, a credit hold) over what the other node wrote meanwhile.
 *
 * The fenced tables gain `lease_epoch`, a column that is never stored: a writer sets it to the epoch
 * it held when the write was made (src/storage/postgres/lease-epochs.ts), the row trigger checks it
 * with gw_fence (this node, that very epoch, unexpired) and clears it. A row written without one (an
 * update that does not set it finds the stored null) claims owner and expiry only, as before; a
 * connection without a node id (tools, a data dir migration) writes freely.
 *
 * The trigger's once-per-statement memo (migration 008) now names the epoch it checked: the rows of
 * one statement that carry the same epoch cost a comparison, a row with another epoch is checked
 * again, and a row without one is covered by any check of its instance in that statement. The auth
 * tables (whose statement calls gw_fence itself, migration 009) keep their trigger, which accepts
 * such a memo.
 *
 * The credit batch takes the epoch of the holds it grants (gw_credit_batch gains p_epoch; the
 * five-argument form goes). Debits and releases stay unfenced: a debit is of a message that left.
 *
 * Adding a nullable column without a default changes the catalogue only (no table rewrite).
 */
export const sql = `
ALTER TABLE messages ADD COLUMN lease_epoch bigint;
ALTER TABLE media ADD COLUMN lease_epoch bigint;
ALTER TABLE credit_holds ADD COLUMN lease_epoch bigint;
ALTER TABLE handovers ADD COLUMN lease_epoch bigint;
ALTER TABLE conversations ADD COLUMN lease_epoch bigint;
ALTER TABLE deliveries ADD COLUMN lease_epoch bigint;

CREATE OR REPLACE FUNCTION gw_fence(inst text, ep bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  me text := current_setting('gw.node', true);
BEGIN
  IF me IS NULL OR me = '' THEN
    RETURN true;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM leases WHERE instance_id = inst AND owner_node = me AND (ep IS NULL OR epoch = ep) AND expires_at > now()) THEN
    RAISE EXCEPTION 'stale lease: node % does not hold the lease of % (epoch %)', me, inst, COALESCE(ep::text, 'any') USING ERRCODE = 'GW001';
  END IF;
  PERFORM set_config('gw.fenced', statement_timestamp()::text || ' ' || inst || ' ' || COALESCE(ep::text, ''), true);
  RETURN true;
END
$$;

-- The auth tables: no epoch on the row (their statement calls gw_fence with it).
CREATE OR REPLACE FUNCTION gw_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF starts_with(current_setting('gw.fenced', true), statement_timestamp()::text || ' ' || NEW.instance_id || ' ') THEN
    RETURN NEW;
  END IF;
  PERFORM gw_fence(NEW.instance_id, NULL);
  RETURN NEW;
END
$$;

CREATE FUNCTION gw_fenced_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  memo text := current_setting('gw.fenced', true);
  seen text := statement_timestamp()::text || ' ' || NEW.instance_id || ' ';
BEGIN
  IF memo IS NOT NULL AND (memo = seen || COALESCE(NEW.lease_epoch::text, '') OR (NEW.lease_epoch IS NULL AND starts_with(memo, seen))) THEN
    NEW.lease_epoch := NULL;
    RETURN NEW;
  END IF;
  PERFORM gw_fence(NEW.instance_id, NEW.lease_epoch);
  NEW.lease_epoch := NULL;
  RETURN NEW;
END
$$;

DROP TRIGGER messages_fenced ON messages;
DROP TRIGGER media_fenced ON media;
DROP TRIGGER credit_holds_fenced ON credit_holds;
DROP TRIGGER handovers_fenced ON handovers;
DROP TRIGGER conversations_fenced ON conversations;
DROP TRIGGER deliveries_fenced ON deliveries;
CREATE TRIGGER messages_fenced BEFORE INSERT OR UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION gw_fenced_epoch();
CREATE TRIGGER media_fenced BEFORE INSERT OR UPDATE ON media FOR EACH ROW EXECUTE FUNCTION gw_fenced_epoch();
CREATE TRIGGER credit_holds_fenced BEFORE INSERT OR UPDATE ON credit_holds FOR EACH ROW EXECUTE FUNCTION gw_fenced_epoch();
CREATE TRIGGER handovers_fenced BEFORE INSERT OR UPDATE ON handovers FOR EACH ROW EXECUTE FUNCTION gw_fenced_epoch();
CREATE TRIGGER conversations_fenced BEFORE INSERT OR UPDATE ON conversations FOR EACH ROW EXECUTE FUNCTION gw_fenced_epoch();
CREATE TRIGGER deliveries_fenced BEFORE INSERT OR UPDATE ON deliveries FOR EACH ROW EXECUTE FUNCTION gw_fenced_epoch();

DROP FUNCTION gw_credit_batch(text, integer, bigint[], bigint[], bigint[]);
CREATE FUNCTION gw_credit_batch(p_instance text, p_session integer, p_commits bigint[], p_releases bigint[], p_holds bigint[], p_epoch bigint)
RETURNS TABLE (balance bigint, spent bigint, held integer, granted integer)
LANGUAGE plpgsql SET plan_cache_mode = auto AS $fn$
DECLARE
  cc integer;
  rc integer;
  g integer;
  b bigint;
  s bigint;
  h integer;
BEGIN
  DELETE FROM credit_holds c WHERE c.instance_id = p_instance AND c.session = p_session AND c.n = ANY (p_commits);
  GET DIAGNOSTICS cc = ROW_COUNT;
  DELETE FROM credit_holds c WHERE c.instance_id = p_instance AND c.session = p_session AND c.n = ANY (p_releases);
  GET DIAGNOSTICS rc = ROW_COUNT;
  SELECT c.balance, c.spent, c.held INTO b, s, h FROM credits c WHERE c.instance_id = p_instance FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 0::bigint, 0::bigint, 0, 0;
    RETURN;
  END IF;
  b := b - cc;
  s := s + cc;
  h := h - cc - rc;
  g := LEAST(COALESCE(cardinality(p_holds), 0), GREATEST(0, b - h));
  h := h + g;
  UPDATE credits c SET balance = b, spent = s, held = h WHERE c.instance_id = p_instance;
  IF g > 0 THEN
    INSERT INTO credit_holds (instance_id, session, n, lease_epoch) SELECT p_instance, p_session, x, p_epoch FROM unnest(p_holds[1:g]) AS x;
  END IF;
  RETURN QUERY SELECT b, s, h, g;
END
$fn$;
`;
