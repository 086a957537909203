import type { Logger } from 'pino';
import type { EventConsumer, GatewayEvent } from './types.js';

/**
 * Fans every event out to the registered consumers. Adding a consumer touches no other one. A
 * consumer marked `critical` (the webhook outbox) fails the publish when it fails, so the
 * connection does not acknowledge an event that was not stored; others only log.
 */
export class EventBus {
  private readonly consumers: Array<{ consumer: EventConsumer; critical: boolean }> = [];

  constructor(private readonly logger: Logger) {}

  register(consumer: EventConsumer, options: { critical?: boolean } = {}): void {
    this.consumers.push({ consumer, critical: options.critical ?? false });
  }

  async publish(event: GatewayEvent): Promise<void> {
    const results = await Promise.allSettled(this.consumers.map(({ consumer }) => consumer.handle(event)));
    let failure: unknown = null;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return;
      const entry = this.consumers[i]!;
      this.logger.error({ err: r.reason, consumer: entry.consumer.name, type: event.type, instanceId: event.instanceId }, 'event consumer failed');
      if (entry.critical && failure === null) failure = r.reason;
    });
    if (failure !== null) throw failure;
  }
}
