/** The chatbot's state: each instance's flow, open handovers and conversation positions. */
export const sql = `
CREATE TABLE flows (
  instance_id text PRIMARY KEY,
  doc text NOT NULL
);
CREATE TABLE handovers (
  instance_id text NOT NULL,
  chat_id text NOT NULL,
  doc text NOT NULL,
  PRIMARY KEY (instance_id, chat_id)
);
CREATE TABLE conversations (
  instance_id text NOT NULL,
  chat_id text NOT NULL,
  doc text NOT NULL,
  PRIMARY KEY (instance_id, chat_id)
);
`;
