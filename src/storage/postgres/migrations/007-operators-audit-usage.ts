/**
 * Operators (named panel accounts), the audit log (append-only, swept by age) and sends per
 * instance and day. None is fenced by leases: operators and audit entries are the gateway's, not an
 * instance owner's, and usage counts are additive (each node adds what it sent).
 */
export const sql = `
CREATE TABLE operators (
  name text PRIMARY KEY,
  doc jsonb NOT NULL
);

CREATE TABLE audit (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  instance_id text,
  target text,
  outcome text NOT NULL
);
CREATE INDEX audit_instance ON audit (instance_id, seq);
CREATE INDEX audit_actor ON audit (actor, seq);
CREATE INDEX audit_at ON audit (at);

CREATE TABLE usage_days (
  instance_id text NOT NULL,
  day date NOT NULL,
  sent integer NOT NULL DEFAULT 0,
  debited integer NOT NULL DEFAULT 0,
  PRIMARY KEY (instance_id, day)
);
`;
