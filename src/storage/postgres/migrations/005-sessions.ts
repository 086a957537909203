/** Panel sessions, shared by every node: a browser signed in on one node is signed in on all. */
export const sql = `
CREATE TABLE panel_sessions (
  key text PRIMARY KEY,
  principal text NOT NULL,
  doc jsonb NOT NULL,
  last_seen bigint NOT NULL
);
CREATE INDEX panel_sessions_principal ON panel_sessions (principal);
CREATE INDEX panel_sessions_seen ON panel_sessions (last_seen);
`;
