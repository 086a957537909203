/**
 * Baileys' `BufferJSON.reviver` as one walk over an already parsed document, with the same result
 * as `JSON.parse(text, BufferJSON.reviver)`: bottom-up, `{"type": "Buffer", "data": base64}`
 * becomes a Buffer, and so does a non-empty object (not an array) whose every key parses as an
 * integer and whose every value is a number (an old Uint8Array written without the replacer).
 *
 * Why not the reviver: every daemon start reads each session's auth state (a realistic account's
 * is ~166 KB of JSON), and with the reviver that was 21 % of the CPU of 300 logins
 * (`BENCH_SESSIONS_PROFILES`, sessions-restart): 6.7-7.8 ms a file against 2.8-4.1 ms for a plain
 * JSON.parse and this walk (V8's reviver path costs 3.5-5 ms a file by itself, and Baileys'
 * reviver lists the keys of every object it is given). test/unit/buffer-json.test.ts compares
 * both on documents of every shape.
 */
export function reviveBuffers(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = reviveBuffers(value[i]);
    return value;
  }
  const record = value as Record<string, unknown>;
  let keys = 0;
  let numeric = true;
  for (const key of Object.keys(record)) {
    const old = record[key];
    const v = reviveBuffers(old);
    // An own "__proto__" (JSON.parse makes one) is a data property: assigning it keeps the prototype.
    if (v !== old) record[key] = v;
    keys++;
    if (numeric && (typeof v !== 'number' || Number.isNaN(parseInt(key, 10)))) numeric = false;
  }
  if (record.type === 'Buffer' && typeof record.data === 'string') return Buffer.from(record.data, 'base64');
  if (keys > 0 && numeric) return Buffer.from(Object.values(record) as number[]);
  return record;
}
