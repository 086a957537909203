import type { UserFacingSocketConfig, WASocket } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import type { GatewayConfig } from '../../config/schema.js';

/** `baileys.*` in config.json (the schema documents each key). */
export type BaileysSettings = GatewayConfig['baileys'];

/**
 * The part of a Baileys socket the gateway touches, picked from Baileys' own types so an upgrade
 * that changes this surface breaks the build instead of the daemon. The LID store is narrowed to
 * the one method used because the class has private fields no fake could match.
 */
export type SocketLike = Pick<
  WASocket,
  'ev' | 'user' | 'sendMessage' | 'end' | 'logout' | 'requestPairingCode' | 'sendPresenceUpdate' | 'readMessages' | 'onWhatsApp' | 'groupFetchAllParticipating' | 'groupMetadata'
> & {
  readonly signalRepository: {
    readonly lidMapping: Pick<WASocket['signalRepository']['lidMapping'], 'getPNForLID'>;
  };
};

export type MakeSocket = (config: UserFacingSocketConfig) => SocketLike;

export interface BaileysOptions {
  dataDir: string;
  logger: Logger;
  settings: BaileysSettings;
  clock?: Clock;
  /** Test seam; default Baileys' makeWASocket. */
  makeSocket?: MakeSocket;
  /** Jitter source in [0, 1); tests pin it. */
  random?: () => number;
  /** Quiet period before credentials are written (default 300 ms). */
  authDebounceMs?: number;
  /** How long requestPairingCode waits for WhatsApp to offer pairing (default 60 s). */
  pairingTimeoutMs?: number;
}
