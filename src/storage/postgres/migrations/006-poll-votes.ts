/** Poll votes: each voter's latest choice, kept with the poll's row (the poll's secret is in its body). */
export const sql = `
ALTER TABLE messages ADD COLUMN votes jsonb;
`;
