import { BufferJSON } from '@whiskeysockets/baileys';
import { reviveBuffers } from './buffer-json.js';

/**
 * How a kind of Signal key is kept in memory as text (one string an entry: one heap object, with
 * nothing inside it for the garbage collector to mark) and what it is in the saved file.
 */
export interface KeyText {
  /** The value as it is kept. */
  encode(value: unknown): string;
  /** A new object each call, as Baileys expects it. */
  decode(text: string): unknown;
  /** The value's JSON in the saved file: what `JSON.stringify(value, BufferJSON.replacer)` gives. */
  json(text: string): string;
}

/** The value's JSON itself (app-state versions, Signal sessions, trusted-contact tokens). */
export const jsonText: KeyText = {
  encode: (value) => JSON.stringify(value, BufferJSON.replacer),
  decode: (text) => reviveBuffers(JSON.parse(text)),
  json: (text) => text,
};

const HALF = 32;

function raw32(value: unknown): Uint8Array | null {
  return value instanceof Uint8Array && value.byteLength === HALF ? value : null;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/**
 * A one-time pre-key (Baileys' KeyPair, `{ private, public }`, 32 bytes each) as a 64-character
 * latin1 string, its 64 bytes: 80 bytes of heap an entry instead of ~250 as an object with two
 * Buffers, or ~150 as its JSON. A device that pairs makes 812 of them and keeps those contacts have
 * not used (bench/sessions.ts pairs as against WhatsApp: 0.2 MB of heap a session as objects).
 *
 * Anything else (another shape, other lengths) is kept as its JSON, never 64 characters long (a
 * space is added to one that is): the length tells the two forms apart. The file holds the same
 * JSON either way, keys in the order Baileys makes them (`private`, then `public`).
 */
export const keyPairText: KeyText = {
  encode(value) {
    if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      const { private: priv, public: pub } = value as { private?: unknown; public?: unknown };
      const a = raw32(priv);
      const b = raw32(pub);
      if (a && b && keys.length === 2 && keys[0] === 'private' && keys[1] === 'public') return latin1(a) + latin1(b);
    }
    // A JSON text of exactly 64 characters would read as a packed pair: one space makes it 65.
    const json = jsonText.encode(value);
    return json.length === 2 * HALF ? `${json} ` : json;
  },
  decode(text) {
    if (text.length !== 2 * HALF) return jsonText.decode(text);
    return { private: Buffer.from(text.slice(0, HALF), 'latin1'), public: Buffer.from(text.slice(HALF), 'latin1') };
  },
  json(text) {
    if (text.length !== 2 * HALF) return text.trimEnd();
    const b64 = (part: string) => Buffer.from(part, 'latin1').toString('base64');
    return `{"private":{"type":"Buffer","data":"${b64(text.slice(0, HALF))}"},"public":{"type":"Buffer","data":"${b64(text.slice(HALF))}"}}`;
  },
};
