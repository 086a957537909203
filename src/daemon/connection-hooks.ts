import type { Logger } from 'pino';
import type { ConnectionManager } from '../connection/manager.js';
import type { ConnectionHooks } from '../connection/types.js';
import type { ConnectionStatus } from '../domain/types.js';
import type { Clock } from '../domain/clock.js';
import type { EventBus } from '../events/bus.js';
import type { GatewayEvent } from '../events/types.js';
import type { MessageHub } from '../messages/hub.js';
import type { StatusReporter } from '../status/status-reporter.js';
import { labelEvent } from '../account/label-event.js';

export interface HookParts {
  status: Pick<StatusReporter, 'connectionChanged'>;
  manager: Pick<ConnectionManager, 'notify'>;
  bus: Pick<EventBus, 'publish'>;
  hub: Pick<MessageHub, 'received' | 'update' | 'pollKey'>;
  clock: Clock;
  logger: Logger;
  /** Several hosts: the other nodes show the status of what runs here. */
  reportStatus?: (instanceId: string, status: ConnectionStatus, reason: string | null) => void;
}

/**
 * Where what a connection reports goes: status changes to the status reporter, QR codes to the
 * event bus, messages and updates to the message hub; observers (`gateway pair`) hear status and
 * QR too.
 */
export function connectionHooks(parts: HookParts): (instanceId: string) => ConnectionHooks {
  const { status, manager, bus, hub, clock, logger } = parts;
  return (id) => ({
    onStatus: (change) => {
      status.connectionChanged(id, change);
      parts.reportStatus?.(id, change.to, change.reason ?? null);
      manager.notify(id, { type: 'status', change });
    },
    onQr: (qr) => {
      bus.publish({ type: 'qr.updated', instanceId: id, timestamp: new Date(clock.now()).toISOString(), data: { qr } }).catch((err: unknown) => logger.error({ err, instanceId: id }, 'could not store qr.updated'));
      manager.notify(id, { type: 'qr', qr });
    },
    onMessage: (message, media, extra) => hub.received(id, message, media, extra),
    onUpdate: (update) => hub.update(id, update),
    onEvent: (event) => bus.publish({ ...event, instanceId: id, timestamp: new Date(clock.now()).toISOString() } as GatewayEvent),
    pollOf: (messageId) => hub.pollKey(id, messageId),
    onLabel: (update) => bus.publish({ type: 'label.updated', instanceId: id, timestamp: new Date(clock.now()).toISOString(), data: labelEvent(update) }),
  });
}
