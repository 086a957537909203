import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import { errorMessage } from '../domain/errors.js';
import type { MetricsSink } from '../domain/metrics-sink.js';
import type { InstanceRecord } from '../schemas/instance.js';
import type { EventConsumer, GatewayEvent } from '../events/types.js';
import type { DeliveryPatch, DeliveryRecord, OutboxStore } from '../storage/ports/outbox.js';
import { JITTER_FRACTION, retryDelay } from './backoff.js';
import { admits } from './chat-filters.js';
import { sendableHeaders } from './custom-headers.js';
import { instanceShare, pickFair, type DueHeads } from './fair-share.js';
import { guardedLookup } from './guarded-lookup.js';
import { AttemptAbort, postWebhook, type PostResult } from './http-post.js';
import type { InstanceQueue, PendingDelivery } from './instance-queue.js';
import { Outbox } from './outbox.js';
import { webhookHeaders } from './signing.js';
import { checkWebhookUrl, type Resolver } from './target-policy.js';
import type { TimerHandle, Timers } from '../domain/timers.js';

export interface DelivererOptions {
  store: OutboxStore;
  settings: GatewayConfig['webhooks'];
  instances: { get(id: string): InstanceRecord | undefined };
  /** Wall-clock time: what deliveries store and show, the webhook-timestamp header. */
  clock: Clock;
  /** Time that never steps back: when retries are due (see OutboxOptions.monotonic). */
  monotonic: () => number;
  timers: Timers;
  random: () => number;
  resolver: Resolver;
  logger: Logger;
  metrics: MetricsSink;
  userAgent: string;
  /** How long stop() lets attempts in flight finish before aborting them. */
  stopGraceMs: number;
}

/** Where a delivery goes, for logs: scheme, host and port only (a path or query may carry a token). */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid URL';
  }
}

/**
 * The webhook outbox consumer and its delivery loop. `handle` (critical on the event bus) stores
 * each subscribed event before it resolves; the loop attempts lane heads that are due, at most
 * `webhooks.concurrency` at once and each instance up to its fair share (fair-share.ts), and
 * schedules retries on `webhooks.retryDelaysMs` with jitter, on the monotonic clock.
 */
export class WebhookDeliverer implements EventConsumer {
  readonly name = 'webhook-outbox';
  readonly outbox: Outbox;
  private readonly inFlight = new Set<PendingDelivery>();
  private readonly running = new Set<Promise<void>>();
  /** Records of finished deliveries still being written. */
  private readonly writes = new Set<Promise<void>>();
  private wake: TimerHandle | null = null;
  private pumpQueued = false;
  private started = false;
  private stopped = false;
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  /** The connection resolves through the target policy too (DNS rebinding). */
  private readonly lookup: ReturnType<typeof guardedLookup>;

  constructor(private readonly options: DelivererOptions) {
    this.lookup = guardedLookup(options.resolver, options.settings.allowPrivateTargets);
    this.outbox = new Outbox({
      store: options.store,
      maxPendingPerInstance: options.settings.maxPendingPerInstance,
      historyPerInstance: options.settings.historyPerInstance,
      clock: options.clock,
      monotonic: options.monotonic,
      maxRetryDelayMs: Math.ceil(Math.max(0, ...options.settings.retryDelaysMs) * (1 + JITTER_FRACTION)),
      logger: options.logger,
      instanceExists: (id) => options.instances.get(id) !== undefined,
    });
  }

  /** Stores the event for delivery if the instance has a webhook subscribed to its type and its chat. */
  async handle(event: GatewayEvent): Promise<void> {
    const webhook = this.options.instances.get(event.instanceId)?.webhook;
    if (!webhook) return;
    if (webhook.events !== null && !webhook.events.includes(event.type)) return;
    if (!admits(webhook.filters, event)) return;
    await this.outbox.append(event);
    this.kick();
  }

  /**
   * Queues a `webhook.test` event for the instance's webhook, whatever its events filter (it was
   * asked for); it is stored, signed, retried and listed like any delivery, in a lane of its own
   * and before the instance's other due deliveries. Null without a webhook.
   */
  async test(instanceId: string): Promise<DeliveryRecord | null> {
    if (!this.options.instances.get(instanceId)?.webhook) return null;
    const now = new Date(this.options.clock.now()).toISOString();
    const record = await this.outbox.append({ type: 'webhook.test', instanceId, timestamp: now, data: { message: 'A test event: your webhook receiver is reachable.', requestedAt: now } });
    this.kick();
    return record;
  }

  /** Queues a finished delivery again (same webhook-id); see Outbox.requeue. */
  async redeliver(instanceId: string, deliveryId: string): ReturnType<Outbox['requeue']> {
    const result = await this.outbox.requeue(instanceId, deliveryId);
    if (result.outcome === 'requeued') {
      this.options.logger.info({ instanceId, deliveryId }, 'webhook delivery re-queued');
      this.kick();
    }
    return result;
  }

  /**
   * The instance's webhook URL (or its custom headers) changed: what is pending goes to the new one
   * now, not after the backoff the old one earned (issue 21: a fixed receiver waited 73 s for it).
   */
  retarget(instanceId: string): void {
    const moved = this.outbox.retarget(instanceId);
    if (moved > 0) this.options.logger.info({ instanceId, deliveries: moved }, 'webhook URL or headers changed: pending deliveries are due now');
    this.kick();
  }

  pendingCount(): number {
    return this.outbox.pendingCount();
  }

  /** Loads the pending deliveries the store holds (at start). */
  load(): Promise<void> {
    return this.outbox.load();
  }

  start(): void {
    this.started = true;
    this.kick();
  }

  /** Stops scheduling, gives attempts in flight a moment, then aborts them (they stay pending). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.cancel();
    this.wake = null;
    if (this.running.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.options.stopGraceMs);
      });
      await Promise.race([Promise.allSettled([...this.running]), grace]);
      clearTimeout(timer);
      for (const d of this.inFlight) d.abort?.abort();
      await Promise.allSettled([...this.running]);
    }
    // The store is closed with the rest of the storage, after every feature stopped.
    await Promise.allSettled([...this.writes]);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Runs the scheduler soon, once per burst of changes. */
  private kick(): void {
    if (!this.started || this.stopped || this.pumpQueued) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** Turns of the scheduler, to go round the instances when they tie (see pickFair). */
  private turn = 0;

  /**
   * Starts the due lane heads the free slots allow, each instance up to its fair share, and arms
   * one timer for the next due one. Due times are on the monotonic clock.
   */
  private pump(): void {
    if (this.stopped) return;
    const now = this.options.monotonic();
    const candidates: DueHeads[] = [];
    let active = 0;
    let earliest = Number.POSITIVE_INFINITY;
    for (const q of this.outbox.all()) {
      let due: PendingDelivery[] | null = null;
      for (const d of q.heads()) {
        if (!d.durable || d.inFlight) continue;
        if (d.dueAt <= now) (due ??= []).push(d);
        else if (d.dueAt < earliest) earliest = d.dueAt;
      }
      if (due) candidates.push({ queue: q, due });
      if (due || q.inFlight > 0) active += 1;
    }
    const { concurrency } = this.options.settings;
    const free = concurrency - this.inFlight.size;
    if (candidates.length > 0 && free > 0) {
      for (const [q, d] of pickFair(candidates, free, instanceShare(concurrency, active), this.turn++)) this.startAttempt(q, d);
    }
    this.wake?.cancel();
    this.wake = Number.isFinite(earliest) ? this.options.timers.after(earliest - now, () => this.kick()) : null;
  }

  private startAttempt(q: InstanceQueue, d: PendingDelivery): void {
    d.inFlight = true;
    q.inFlight += 1;
    this.inFlight.add(d);
    const run = this.attempt(q, d)
      .catch((err: unknown) => this.options.logger.error({ err, instanceId: q.instanceId, deliveryId: d.id }, 'webhook attempt crashed'))
      .finally(() => {
        d.inFlight = false;
        d.abort = null;
        q.inFlight -= 1;
        this.inFlight.delete(d);
        this.running.delete(run);
        this.kick();
      });
    this.running.add(run);
  }

  private async attempt(q: InstanceQueue, d: PendingDelivery): Promise<void> {
    const { logger, settings, clock } = this.options;
    const instance = this.options.instances.get(q.instanceId);
    if (!instance) {
      this.outbox.forget(q.instanceId);
      return;
    }
    let event: GatewayEvent | null;
    try {
      event = await this.outbox.readEvent(q, d);
    } catch (err) {
      // Not lost (still pending): tried again in a while, not in a tight loop.
      logger.error({ instanceId: q.instanceId, deliveryId: d.id, error: errorMessage(err) }, 'could not read a webhook delivery; trying again in 10 s');
      d.dueAt = this.options.monotonic() + 10_000;
      return;
    }
    if (!event || q.pending.get(d.id) !== d) {
      // Gone (instance deleted, dropped past the bound) or no longer pending: nothing to send.
      q.remove(d);
      return;
    }
    const startedAt = clock.now();
    const target = instance.webhook ? origin(instance.webhook.url) : null;
    const result = await this.send(instance, d.id, event, startedAt, d);
    if (!result.ok && result.aborted) return;
    if (!this.options.instances.get(q.instanceId)) return;

    const endedAt = clock.now();
    const state = d.state;
    const next: DeliveryPatch = {
      id: d.id,
      seq: state.seq,
      status: 'pending',
      attempts: state.attempts + 1,
      lastAttemptAt: new Date(startedAt).toISOString(),
      lastStatus: result.status,
      lastError: result.ok ? null : result.error,
      nextAttemptAt: null,
      deliveredAt: state.deliveredAt,
      finishedAt: null,
      redeliveries: state.redeliveries,
    };
    let dueAt = 0;
    const metrics = this.options.metrics;
    const log = { instanceId: q.instanceId, deliveryId: d.id, type: state.type, attempt: next.attempts, target, status: result.status };
    if (result.ok) {
      Object.assign(next, { status: 'delivered', deliveredAt: new Date(endedAt).toISOString(), finishedAt: new Date(endedAt).toISOString() });
      metrics.webhookDelivery('delivered');
      logger.debug(log, 'webhook delivered');
    } else {
      // The receiver's answer stays in the delivery (shown to the instance); the log gets its size.
      const why = { ...log, error: result.logError, ...(result.bodyBytes !== null ? { bodyBytes: result.bodyBytes } : {}) };
      const delay = retryDelay(next.attempts, settings.retryDelaysMs, this.options.random);
      if (delay === null) {
        Object.assign(next, { status: 'failed', finishedAt: new Date(endedAt).toISOString() });
        metrics.webhookDelivery('failed');
        logger.error(why, 'webhook delivery failed after its last attempt');
      } else {
        next.nextAttemptAt = new Date(endedAt + delay).toISOString();
        dueAt = this.options.monotonic() + delay;
        metrics.webhookDelivery('retry');
        logger.warn({ ...why, retryInMs: delay }, 'webhook attempt failed; will retry');
      }
    }
    if (next.status !== 'pending') {
      // Finished: the queue moves on now and the outcome is written behind it (see Outbox.save).
      const writing = this.outbox.save(q, d, next, dueAt).catch((err: unknown) => {
        logger.error({ instanceId: q.instanceId, deliveryId: d.id, error: errorMessage(err) }, 'could not record a webhook attempt');
      });
      this.writes.add(writing);
      void writing.finally(() => this.writes.delete(writing));
      if (this.writes.size > 512) await writing; // back-pressure when the store falls behind
      return;
    }
    try {
      await this.outbox.save(q, d, next, dueAt);
    } catch (err) {
      // Keep going from memory (the state and due time are set); the store keeps the previous
      // state, so a restart retries it.
      logger.error({ instanceId: q.instanceId, deliveryId: d.id, error: errorMessage(err) }, 'could not record a webhook attempt');
    }
  }

  /** One attempt: the SSRF policy again (DNS may have changed), then the signed POST. */
  private async send(instance: InstanceRecord, id: string, event: GatewayEvent, now: number, d: PendingDelivery): Promise<PostResult> {
    const { settings } = this.options;
    const webhook = instance.webhook;
    if (!webhook) return { ok: false, status: null, error: 'the instance has no webhook URL now', logError: 'the instance has no webhook URL now', bodyBytes: null, aborted: false };
    let url: URL;
    try {
      url = await checkWebhookUrl(webhook.url, settings.allowPrivateTargets, this.options.resolver);
    } catch (err) {
      const error = `refused by the webhook target policy: ${errorMessage(err)}`;
      return { ok: false, status: null, error, logError: error, bodyBytes: null, aborted: false };
    }
    const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, instanceId: event.instanceId, data: event.data });
    // The custom headers stored now, not when the event was queued: a rotated token applies at once.
    const headers = webhookHeaders({ id, timestampSeconds: Math.floor(now / 1000), body, secret: webhook.secret, keyOwner: webhook, userAgent: this.options.userAgent, custom: sendableHeaders(webhook.headers) });
    const abort = new AttemptAbort();
    d.abort = abort;
    const result = await postWebhook({
      url,
      body,
      headers,
      timeoutMs: settings.timeoutMs,
      lookup: this.lookup,
      agents: this.agents,
      abort,
    });
    // A path or query may carry a token: errors name the origin only.
    if (!result.ok) {
      result.error = result.error.split(webhook.url).join(origin(webhook.url));
      result.logError = result.logError.split(webhook.url).join(origin(webhook.url));
    }
    return result;
  }
}
