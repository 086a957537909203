/**
 * Several nodes, one gateway: the gateway's own record (the server secret's hashes, the cluster
 * secret's hash and the settings every node shares), the nodes, and each instance's lease (which
 * node owns it, since which epoch, until when).
 *
 * Fencing: a node's connections carry its id (`gw.node`, set when they connect). Rows of what an
 * instance's owner writes (messages, media, WhatsApp auth state, credit holds, handovers and chat
 * positions) may only be inserted or updated by the node that holds the instance's lease, unexpired:
 * a node that stalled past its lease and wakes up writes nothing (its statement fails). Deletes
 * (an instance removed from any node, holds of dead nodes released) are not fenced, and a
 * connection without a node id (tools, the migration of a data dir) writes freely.
 */
export const sql = `
CREATE TABLE gateway (
  id integer PRIMARY KEY CHECK (id = 1),
  server_secret_hash text,
  retiring_secret_hash text,
  cluster_secret_hash text NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE nodes (
  node_id text PRIMARY KEY,
  advertise_url text NOT NULL,
  -- The node's database session (its liveness lock: gone at once when its process dies).
  session_id bigint,
  started_at timestamptz NOT NULL DEFAULT now(),
  renewed_at timestamptz NOT NULL DEFAULT now(),
  stopped boolean NOT NULL DEFAULT false
);

CREATE TABLE leases (
  instance_id text PRIMARY KEY,
  owner_node text,
  epoch bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL DEFAULT now(),
  -- The owner's connection status, for the other nodes' views (written lazily by the owner).
  status text,
  reason text
);
CREATE INDEX leases_owner ON leases (owner_node);

CREATE FUNCTION gw_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me text := current_setting('gw.node', true);
BEGIN
  IF me IS NULL OR me = '' THEN
    RETURN NEW;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM leases WHERE instance_id = NEW.instance_id AND owner_node = me AND expires_at > now()) THEN
    RAISE EXCEPTION 'stale lease: node % does not hold the lease of %', me, NEW.instance_id USING ERRCODE = 'GW001';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER messages_fenced BEFORE INSERT OR UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION gw_fenced();
CREATE TRIGGER media_fenced BEFORE INSERT OR UPDATE ON media FOR EACH ROW EXECUTE FUNCTION gw_fenced();
CREATE TRIGGER auth_creds_fenced BEFORE INSERT OR UPDATE ON auth_creds FOR EACH ROW EXECUTE FUNCTION gw_fenced();
CREATE TRIGGER auth_keys_fenced BEFORE INSERT OR UPDATE ON auth_keys FOR EACH ROW EXECUTE FUNCTION gw_fenced();
CREATE TRIGGER credit_holds_fenced BEFORE INSERT OR UPDATE ON credit_holds FOR EACH ROW EXECUTE FUNCTION gw_fenced();
CREATE TRIGGER handovers_fenced BEFORE INSERT OR UPDATE ON handovers FOR EACH ROW EXECUTE FUNCTION gw_fenced();
CREATE TRIGGER conversations_fenced BEFORE INSERT OR UPDATE ON conversations FOR EACH ROW EXECUTE FUNCTION gw_fenced();
`;
