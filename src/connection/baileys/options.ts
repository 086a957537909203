import type { UserFacingSocketConfig, WASocket } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { AuthStateRepository } from '../../storage/ports/auth-state.js';
import type { Clock } from '../../domain/clock.js';
import type { GatewayConfig } from '../../config/schema.js';
import type { LoginGate } from './login-gate.js';
import type { KeepaliveClock } from './keepalive-clock.js';

/** `baileys.*` in config.json (the schema documents each key); maxConcurrentLogins and sessionThreads default as in the schema when absent. */
export type BaileysSettings = Omit<GatewayConfig['baileys'], 'maxConcurrentLogins' | 'sessionThreads'> & Partial<Pick<GatewayConfig['baileys'], 'maxConcurrentLogins' | 'sessionThreads'>>;

/**
 * The part of a Baileys socket the gateway touches, picked from Baileys' own types so an upgrade
 * that changes this surface breaks the build instead of the daemon. The LID store is narrowed to
 * the one method used because the class has private fields no fake could match.
 */
export type SocketLike = Pick<
  WASocket,
  | 'ev'
  | 'user'
  | 'sendMessage'
  | 'end'
  | 'logout'
  | 'requestPairingCode'
  | 'sendPresenceUpdate'
  | 'readMessages'
  | 'onWhatsApp'
  | 'groupFetchAllParticipating'
  | 'groupMetadata'
  | 'updateMediaMessage'
  | 'fetchStatus'
  | 'profilePictureUrl'
  | 'updateProfileStatus'
  | 'updateProfileName'
  | 'updateProfilePicture'
  | 'removeProfilePicture'
  | 'fetchBlocklist'
  | 'updateBlockStatus'
  | 'chatModify'
  | 'addChatLabel'
  | 'removeChatLabel'
> &
  // Groups, calls, presence subscriptions and the key store (account.ts, groups.ts): optional, so
  // a test double of the socket needs only what its test uses; the real socket has them all.
  Partial<Pick<WASocket, AccountSocketMember>> & {
    readonly signalRepository: {
      readonly lidMapping: Pick<WASocket['signalRepository']['lidMapping'], 'getPNForLID' | 'getLIDForPN'>;
    };
    /**
     * Baileys' WebSocket client (an EventEmitter): its pending queries wait on `TAG:<id>` events; raw
     * stanzas arrive as `CB:<tag>`, every frame as `frame` (keep-socket-alive.ts watches those).
     */
    readonly ws?: Pick<WASocket['ws'], 'eventNames' | 'emit'> & Partial<Pick<WASocket['ws'], 'on' | 'off' | 'isOpen' | 'isClosed' | 'isClosing'>>;
  };

export type AccountSocketMember =
  | 'query'
  | 'sendNode'
  | 'generateMessageTag'
  | 'authState'
  | 'groupParticipantsUpdate'
  | 'groupUpdateSubject'
  | 'groupUpdateDescription'
  | 'groupSettingUpdate'
  | 'groupInviteCode'
  | 'groupRevokeInvite'
  | 'groupAcceptInvite'
  | 'groupLeave'
  | 'updateProfilePicture'
  | 'removeProfilePicture'
  | 'rejectCall'
  | 'presenceSubscribe'
  | 'relayMessage';

export type MakeSocket = (config: UserFacingSocketConfig) => SocketLike;

export interface BaileysOptions {
  /** Where each instance's credentials and keys are stored. */
  auth: AuthStateRepository;
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
  /**
   * Shared by every connection of a daemon: logins in flight at once (the factory makes one; in a
   * session thread, the daemon's, asked across threads: connection/threads/).
   */
  loginGate?: Pick<LoginGate, 'acquire'>;
  /** Shared by every connection of a daemon: the ticks their keepalives ride on (the factory makes one). */
  keepalive?: KeepaliveClock;
  /**
   * The instance's settings that shape its socket, read at every connect: `proxy` (null: direct),
   * `syncFullHistory` and `alwaysOnline`. Absent: direct, no full history, offline at connect.
   */
  connectSettings?: (instanceId: string) => ConnectSettings | Promise<ConnectSettings>;
  /**
   * The lease epoch this node holds for an instance (several nodes on PostgreSQL), read when its
   * connection is made: the connection's auth writes carry it (src/connection/lease-epoch.ts).
   */
  leaseEpoch?: (instanceId: string) => number | null;
}

/** What a socket is opened with, from the instance's settings. */
export interface ConnectSettings {
  proxy: string | null;
  syncFullHistory: boolean;
  /** Show the account online at connect (Baileys' markOnlineOnConnect) instead of offline. */
  alwaysOnline: boolean;
}
