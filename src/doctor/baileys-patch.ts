import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../domain/errors.js';
import type { CheckResult } from './types.js';

/** What the gateway's patch of Baileys (patches/, applied by `npm ci` through patch-package) adds, file by file. */
export const PATCHED: ReadonlyArray<{ file: string; mark: string; what: string }> = [
  { file: 'Utils/chat-utils.js', mark: "Symbol.for('wa-gateway.pauseIfLong')", what: "a first login's app-state decoding holds the event loop for tens of ms" },
  { file: 'Utils/crypto.js', mark: "Symbol.for('wa-gateway.hmacSign')", what: 'its HMACs each leave a native object for a full collection to free in its pause' },
  { file: 'Utils/crypto.js', mark: "Symbol.for('wa-gateway.aesCbcDecrypt')", what: 'its AES-CBC decryptions (one an app-state mutation) each leave a native object for a collection to free in its pause' },
  { file: 'Utils/crypto.js', mark: "Symbol.for('wa-gateway.aesGcmEncrypt')", what: 'each Noise frame it sends leaves a native object for a collection to free in its pause' },
  { file: 'Utils/crypto.js', mark: "Symbol.for('wa-gateway.aesGcmDecrypt')", what: 'each Noise frame it receives leaves a native object for a collection to free in its pause' },
  { file: 'Utils/history.js', mark: "Symbol.for('wa-gateway.decodeHistorySync')", what: "a first login's history sync is decoded whole, the content of its messages too" },
];

/** The directory of the installed Baileys' modules (lib/), where the patched files sit. */
export function baileysLibDir(): string {
  // The package's entry is lib/index.js.
  return dirname(fileURLToPath(import.meta.resolve('@whiskeysockets/baileys')));
}

/**
 * Whether the installed Baileys carries the gateway's patch: without it the gateway works, but a
 * first login decodes the account's app state in one turn of the event loop (40 to 60 ms a
 * realistic account, every other instance waiting) and its HMACs lengthen full collections' pauses
 * (README, "Dependencies").
 */
export function checkBaileysPatch(lib: string = baileysLibDir()): CheckResult {
  const missing: Array<{ file: string; what: string }> = [];
  for (const { file, mark, what } of PATCHED) {
    const path = join(lib, file);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      return { name: 'baileys', status: 'warn', message: `cannot read Baileys' ${path}: ${errorMessage(err)}`, fix: 'reinstall: npm ci' };
    }
    if (!text.includes(mark)) missing.push({ file: path, what });
  }
  if (missing.length === 0) return { name: 'baileys', status: 'ok', message: "Baileys carries the gateway's patch (app-state decoding in time slices, HMACs and AES without native objects, lean history decoding)" };
  return {
    name: 'baileys',
    status: 'warn',
    message: `Baileys was installed without the gateway's patch (npm ci --ignore-scripts?): ${missing.map((m) => m.what).join('; ')}`,
    fix: 'in the install directory: npx patch-package (or npm ci without --ignore-scripts)',
    files: missing.map((m) => m.file),
  };
}
