/**
 * The first schema: instances and owners, credits, messages, media, auth state. Every table but
 * `owners` has the instance id first in its primary key, so a Citus cluster could distribute them
 * by `instance_id` as they are (`owners`, keyed by owner and small, would be a reference table).
 */
export const sql = `
CREATE TABLE instances (
  instance_id text PRIMARY KEY,
  doc jsonb NOT NULL,
  -- Raised by every write: a cache applies a row it re-read only when it is newer than its own.
  version bigint NOT NULL DEFAULT 1
);

-- The one-time trial of each owner: the row is the grant (its primary key makes it one).
CREATE TABLE owners (
  owner text PRIMARY KEY,
  trial_instance_id text NOT NULL,
  trial_granted_at text NOT NULL
);

-- balance counts every credit not spent, held ones included; held = the rows in credit_holds.
CREATE TABLE credits (
  instance_id text PRIMARY KEY,
  balance bigint NOT NULL CHECK (balance >= 0 AND balance <= 1000000000000),
  spent bigint NOT NULL CHECK (spent >= 0),
  held integer NOT NULL CHECK (held >= 0 AND held <= balance)
);

-- A credit reserved by a send of one process (session: see session.ts); stored before the message
-- leaves, deleted by its debit or release, and by a later process when its session is gone.
CREATE TABLE credit_holds (
  instance_id text NOT NULL,
  session integer NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (instance_id, session, n)
);

-- One batch of a process' credit work on one instance, in one round trip: the debits (holds that
-- become spent), releases, and new holds granted from what is free (fewer than asked, or none,
-- when credits run out). Only holds that exist count, so a batch retried after a lost answer
-- never debits twice. The credits row is locked once, after the session's own hold rows.
CREATE FUNCTION gw_credit_batch(p_instance text, p_session integer, p_commits bigint[], p_releases bigint[], p_holds bigint[])
RETURNS TABLE (balance bigint, spent bigint, held integer, granted integer)
LANGUAGE plpgsql AS $fn$
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
    INSERT INTO credit_holds (instance_id, session, n) SELECT p_instance, p_session, x FROM unnest(p_holds[1:g]) AS x;
  END IF;
  RETURN QUERY SELECT b, s, h, g;
END
$fn$;

-- Messages in and out. seq keeps the order they were stored in (a chat's order, as the files
-- engine's journal keeps it); the mutable parts (status, edits, reactions) are columns of their own.
CREATE TABLE messages (
  instance_id text NOT NULL,
  message_id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  chat_id text NOT NULL,
  from_me boolean NOT NULL,
  from_name text,
  status text NOT NULL,
  ts bigint NOT NULL,
  updated_at bigint NOT NULL,
  body text NOT NULL,
  edited_text text,
  deleted boolean NOT NULL DEFAULT false,
  reactions jsonb,
  error text,
  has_media boolean NOT NULL DEFAULT false,
  PRIMARY KEY (instance_id, message_id)
);
CREATE INDEX messages_chat ON messages (instance_id, chat_id, seq);
CREATE INDEX messages_age ON messages (instance_id, ts);

CREATE TABLE media (
  instance_id text NOT NULL,
  message_id text NOT NULL,
  size bigint NOT NULL,
  at bigint NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (instance_id, message_id)
);
-- Media is mostly compressed already; stored uncompressed, a chunk of it is read without the rest.
ALTER TABLE media ALTER COLUMN bytes SET STORAGE EXTERNAL;
CREATE INDEX media_age ON media (instance_id, at);

CREATE TABLE auth_creds (
  instance_id text PRIMARY KEY,
  creds text NOT NULL,
  paired boolean NOT NULL
);
CREATE TABLE auth_keys (
  instance_id text NOT NULL,
  type text NOT NULL,
  data text NOT NULL,
  PRIMARY KEY (instance_id, type)
);
`;
