import type { ConnectionStatus } from '../../domain/types.js';
import type { BaileysSettings } from '../baileys/options.js';
import type { InboundMediaKind } from '../types.js';

/** What a session thread starts with (its workerData). */
export interface SessionThreadData {
  /** Modules imported before Baileys (the daemon's own `--import` preloads: Node 20 does not run them in threads). */
  preloads: string[];
  /** The daemon's log level (each line comes to the daemon's log as the JSON text pino wrote). */
  logLevel: string;
  settings: BaileysSettings;
  /** Quiet period before credentials are written (BaileysOptions.authDebounceMs). */
  authDebounceMs?: number;
  pairingTimeoutMs?: number;
  /** The thread's nice value, above the daemon's own (0: the same priority). */
  nice: number;
}

/** A connection's readable state, sent along with everything the thread says about it. */
export interface RemoteState {
  status: ConnectionStatus;
  qr: string | null;
  reason: string | null;
}

/** A received message's media, described; its bytes are fetched with the `download` call and `token`. */
export interface RemoteMedia {
  token: number;
  mimetype: string;
  fileName?: string;
  declaredSize?: number;
  kind?: InboundMediaKind;
}

/**
 * An AuthSnapshot across threads: each table's JSON made in the session thread, as UTF-8 bytes moved
 * (not copied) to the daemon's thread, where an engine that writes bytes never makes them a string.
 */
export interface WireSnapshot {
  creds: string;
  paired: boolean;
  tables: Array<{ type: string; changed: boolean; bytes: Uint8Array }>;
}

/** The answer to a call on a connection: its value, and the state right after. */
export interface CallAnswer {
  value: unknown;
  state: RemoteState;
}
