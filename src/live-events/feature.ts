import { PassThrough } from 'node:stream';
import Type from 'typebox';
import type { Feature } from '../features/feature.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute } from '../http/route.js';
import type { EventConsumer, GatewayEvent } from '../events/types.js';

/** A client that does not read is dropped once this much is waiting for it. */
const MAX_BUFFERED = 1024 * 1024;
const HEARTBEAT_MS = 15_000;

interface Client {
  stream: PassThrough;
  types: ReadonlySet<string> | null;
}

/**
 * Live events: the same events the webhooks carry, streamed as Server-Sent Events from now on (no
 * replay, no delivery guarantee), with a heartbeat every 15 s. A client that disconnects costs
 * nothing; one that stops reading is dropped; clients per instance are bounded.
 */
export class LiveEvents implements EventConsumer {
  readonly name = 'live-events';
  private readonly clients = new Map<string, Set<Client>>();
  private heartbeat: NodeJS.Timeout | null = null;
  private seq = 0;

  private readonly heartbeatMs: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly maxPerInstance: number,
    /** Seams for tests; the defaults are the contract's. */
    options: { heartbeatMs?: number; maxBuffered?: number } = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.maxBuffered = options.maxBuffered ?? MAX_BUFFERED;
  }

  async handle(event: GatewayEvent): Promise<void> {
    const set = this.clients.get(event.instanceId);
    if (!set) return;
    const frame = `id: ${++this.seq}\nevent: ${event.type}\ndata: ${JSON.stringify({ type: event.type, timestamp: event.timestamp, instanceId: event.instanceId, data: event.data })}\n\n`;
    for (const c of set) {
      if (c.types && !c.types.has(event.type)) continue;
      if (c.stream.writableLength > this.maxBuffered) {
        // Not end(): a stream that is not read never finishes, and would stay registered.
        c.stream.destroy();
        continue;
      }
      c.stream.write(frame);
    }
  }

  /** A new client of `instanceId`; RATE_LIMITED past the bound. */
  open(instanceId: string, types: ReadonlySet<string> | null): PassThrough {
    let set = this.clients.get(instanceId);
    if (!set) {
      set = new Set();
      this.clients.set(instanceId, set);
    }
    if (set.size >= this.maxPerInstance) {
      throw new GatewayError('RATE_LIMITED', `at most ${this.maxPerInstance} live event clients per instance (events.maxClientsPerInstance)`, { retryAfter: 5 });
    }
    const client: Client = { stream: new PassThrough(), types };
    set.add(client);
    const done = (): void => {
      set.delete(client);
      if (set.size === 0 && this.clients.get(instanceId) === set) this.clients.delete(instanceId);
      if (this.clients.size === 0) this.stopHeartbeat();
    };
    client.stream.on('close', done);
    client.stream.on('finish', done);
    client.stream.write(`retry: 3000\n: connected\n\n`);
    this.startHeartbeat();
    return client.stream;
  }

  /** Drops the clients of an instance (deleted) or all (shutdown). */
  close(instanceId?: string): void {
    for (const [id, set] of this.clients) {
      if (instanceId !== undefined && id !== instanceId) continue;
      for (const c of set) c.stream.end();
    }
  }

  count(): number {
    let n = 0;
    for (const s of this.clients.values()) n += s.size;
    return n;
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    // One timer for every client; comments keep proxies and browsers from timing the stream out.
    this.heartbeat = setInterval(() => {
      for (const set of this.clients.values()) for (const c of set) c.stream.write(': ping\n\n');
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}

const EventsQuery = Type.Object(
  { types: Type.Optional(Type.String({ maxLength: 500, description: 'Comma-separated event types to receive (default all).' })) },
  { additionalProperties: false },
);

/** `GET /api/{id}/events`. */
export function liveEventsFeature(parts: { maxClientsPerInstance: number }): Feature & { live: LiveEvents } {
  const live = new LiveEvents(parts.maxClientsPerInstance);
  return {
    name: 'live-events',
    live,
    consumers: [{ consumer: live }],
    gauges: { gateway_live_event_clients: { help: 'Live event (SSE) clients connected.', read: () => live.count() } },
    routes: [
      defineRoute({
        method: 'GET',
        path: '/api/:id/events',
        auth: 'instance',
        operationId: 'liveEvents',
        summary: 'Server-Sent Events of what the webhooks carry, from now on, with a heartbeat every 15 s',
        description: 'No replay and no delivery guarantee (use webhooks for that). At most events.maxClientsPerInstance clients per instance.',
        tags: ['events'],
        query: EventsQuery,
        response: { description: 'An event stream (`event:` is the event type, `data:` the webhook body).', contentType: 'text/event-stream' },
        errors: ['RATE_LIMITED'],
        handle({ koa, instance, query }) {
          const types = query.types ? new Set(query.types.split(',').map((t) => t.trim()).filter(Boolean)) : null;
          const stream = live.open(instance.id, types);
          koa.req.socket.setTimeout(0);
          // The client left: nothing more to flush. Dropped for not reading: cut the connection
          // (an SSE client reconnects on its own), or the response would stay open forever.
          koa.req.on('close', () => stream.destroy());
          stream.once('close', () => {
            if (!koa.res.writableEnded) koa.req.socket.destroy();
          });
          koa.status = 200;
          koa.type = 'text/event-stream';
          koa.set('Cache-Control', 'no-cache, no-transform');
          koa.set('X-Accel-Buffering', 'no');
          koa.body = stream;
          return undefined;
        },
      }),
    ],
    removeInstance: async (id) => live.close(id),
    closeStreams: () => live.close(),
    stop: async () => live.close(),
  };
}
