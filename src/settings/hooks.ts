import type { Logger } from 'pino';
import type { ConnectionActions, ConnectionHooks, MessageUpdate } from '../connection/types.js';
import type { AccountEvent } from '../schemas/account-events.js';
import type { InboundMessage } from '../schemas/events.js';
import type { InstanceSettings } from './settings.js';

/** The chat of status posts. */
const STATUS_CHAT = 'status@broadcast';

export interface SettingsHookParts {
  /** The instance's settings now (read at every report, so a change applies at once). */
  settings: (instanceId: string) => InstanceSettings;
  /** Read marks and presence on the live connection. */
  actions: ConnectionActions;
  logger: Logger;
}

const isGroupChat = (chatId: string): boolean => chatId.endsWith('@g.us');

/** Whether a received message stays out of everything (webhooks, flows, history). */
function dropMessage(s: InstanceSettings, m: InboundMessage): boolean {
  return (s.ignoreGroups && m.isGroup) || (s.ignoreStatus && m.chatId === STATUS_CHAT);
}

/**
 * Whether an update stays out. Receipts of the gateway's own sends to a group still count (the
 * integrator sent them); what people do in a group does not.
 */
function dropUpdate(s: InstanceSettings, u: MessageUpdate): boolean {
  if (s.ignoreStatus && u.chatId === STATUS_CHAT) return true;
  return s.ignoreGroups && u.kind !== 'status' && isGroupChat(u.chatId);
}

/** Whether an account event stays out: group events, and chat states in groups. Calls ring as usual. */
function dropEvent(s: InstanceSettings, e: AccountEvent): boolean {
  if (!s.ignoreGroups) return false;
  switch (e.type) {
    case 'group.joined':
    case 'group.updated':
    case 'group.participants':
      return true;
    case 'presence.updated':
      return isGroupChat(e.data.chatId);
    default:
      return false;
  }
}

/**
 * The instance settings applied where connections report, before anything is stored or published,
 * so webhooks, live events, flows and history all agree: `ignoreGroups` and `ignoreStatus` drop
 * traffic here; `autoRead` marks what was stored read. The same for Baileys and the sandbox: both
 * report through these hooks. (`alwaysOnline` at connect is each connection's own, as Baileys says
 * online or offline itself when its socket opens.)
 */
export function withSettings(inner: (instanceId: string) => ConnectionHooks, parts: SettingsHookParts): (instanceId: string) => ConnectionHooks {
  const { settings, actions, logger } = parts;
  return (id) => {
    const hooks = inner(id);
    const later = (what: string, run: Parameters<ConnectionActions['act']>[1]): void => {
      actions.act(id, run, { paced: false }).catch((err: unknown) => logger.warn({ err, instanceId: id }, `could not ${what}`));
    };
    return {
      ...hooks,
      async onMessage(message, media, extra) {
        const s = settings(id);
        if (dropMessage(s, message)) return;
        await hooks.onMessage(message, media, extra);
        if (s.autoRead && message.fromMe !== true) {
          const participant = message.isGroup ? { participant: message.sender } : {};
          later('mark a received message read (autoRead)', (c) => c.markRead([{ chatId: message.chatId, messageId: message.messageId, fromMe: false, ...participant }]));
        }
      },
      async onUpdate(update) {
        if (dropUpdate(settings(id), update)) return;
        await hooks.onUpdate(update);
      },
      ...(hooks.onEvent
        ? {
            async onEvent(event: AccountEvent) {
              if (dropEvent(settings(id), event)) return;
              await hooks.onEvent!(event);
            },
          }
        : {}),
    };
  };
}
