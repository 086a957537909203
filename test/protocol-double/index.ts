import { fileURLToPath, pathToFileURL } from 'node:url';

export { ProtocolDouble, Session, type AccountWorld, type DoubleError, type ProtocolDoubleOptions, type SessionKind, type Account, type Device } from './server.js';
export { REALISTIC_ACCOUNT, addressBook, type AccountDataOption, type AccountDataSpec, type BookEntry } from './account-data.js';
export { COLLECTIONS, type CollectionName, type CollectionState } from './app-state.js';
export { cdnDispatcher, installCdn, CDN_HOSTS } from './cdn.mjs';
export { Contact, SignalDevice, type ChatState, type ContactMessage, type ContactOptions, type GatewayReceipt, type ReceiptType } from './contact.js';
export { Group, type GroupOptions } from './group.js';
export { MediaHost, MEDIA_CA_PATH, decryptMedia, encryptMedia, mediaTrustEnv, type MediaKind } from './media.js';
export { parseQr, type ParsedQr } from './phone.js';
export { TEST_ROOT_KEY, TEST_ROOT_SERIAL, makeCertChain, verifySignature } from './cert.js';

/** Absolute path of preload.ts. */
export const PRELOAD_PATH = fileURLToPath(new URL('./preload.ts', import.meta.url));
/** Its plain-JavaScript twin for child processes (see preload-child.mjs: no tsx in the child). */
export const CHILD_PRELOAD_PATH = fileURLToPath(new URL('./preload-child.mjs', import.meta.url));

/**
 * Environment for a child process (e.g. the built `gateway start`) whose Baileys must trust the
 * double: NODE_OPTIONS imports preload-child.mjs before the program.
 */
export function childPreloadEnv(base: string | undefined = process.env.NODE_OPTIONS): Record<string, string> {
  const imports = `--import=${pathToFileURL(CHILD_PRELOAD_PATH).href}`;
  // An ES module preload makes Node start libuv's thread pool before bin/gateway's first line, so
  // the launcher's UV_THREADPOOL_SIZE comes too late: given here, the daemon runs the pool it runs
  // in production (test/e2e/thread-pool.test.ts).
  return { NODE_OPTIONS: base ? `${base} ${imports}` : imports, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16' };
}
