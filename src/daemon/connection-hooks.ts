import type { Logger } from 'pino';
import type { ConnectionManager } from '../connection/manager.js';
import type { ConnectionHooks } from '../connection/types.js';
import type { Clock } from '../domain/clock.js';
import type { EventBus } from '../events/bus.js';
import type { MessageHub } from '../messages/hub.js';
import type { StatusReporter } from '../status/status-reporter.js';
import { labelEvent } from '../account/label-event.js';

export interface HookParts {
  status: Pick<StatusReporter, 'connectionChanged'>;
  manager: Pick<ConnectionManager, 'notify'>;
  bus: Pick<EventBus, 'publish'>;
  hub: Pick<MessageHub, 'received' | 'update'>;
  clock: Clock;
  logger: Logger;
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
      manager.notify(id, { type: 'status', change });
    },
    onQr: (qr) => {
      bus.publish({ type: 'qr.updated', instanceId: id, timestamp: new Date(clock.now()).toISOString(), data: { qr } }).catch((err: unknown) => logger.error({ err, instanceId: id }, 'could not store qr.updated'));
      manager.notify(id, { type: 'qr', qr });
    },
    onMessage: (message, media) => hub.received(id, message, media),
    onUpdate: (update) => hub.update(id, update),
    onLabel: (update) => bus.publish({ type: 'label.updated', instanceId: id, timestamp: new Date(clock.now()).toISOString(), data: labelEvent(update) }),
  });
}
