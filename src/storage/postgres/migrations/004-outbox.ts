/**
 * The webhook outbox: one row per delivery, its event stored once, its state updated in place.
 * Fenced like the other rows the owner writes (migration 003): only the node that runs the
 * instance stores and updates its deliveries.
 */
export const sql = `
CREATE TABLE deliveries (
  instance_id text NOT NULL,
  id text NOT NULL,
  seq bigint NOT NULL,
  type text NOT NULL,
  lane text NOT NULL,
  created_at text NOT NULL,
  status text NOT NULL,
  state jsonb NOT NULL,
  event text NOT NULL,
  finished_at text,
  PRIMARY KEY (instance_id, id)
);
CREATE INDEX deliveries_pending ON deliveries (instance_id, seq) WHERE status = 'pending';
CREATE INDEX deliveries_finished ON deliveries (instance_id, finished_at) WHERE status <> 'pending';
CREATE INDEX deliveries_created ON deliveries (instance_id, created_at);
CREATE TRIGGER deliveries_fenced BEFORE INSERT OR UPDATE ON deliveries FOR EACH ROW EXECUTE FUNCTION gw_fenced();
`;
