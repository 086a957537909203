import type { EventConsumer } from '../events/types.js';
import type { RouteDef } from '../http/route.js';

/**
 * The contract between the daemon and its features (webhooks, flows, metrics, the panel, ...).
 * A feature is built from the core parts (`Core`) and returns what it adds; it changes nothing it
 * was given. The composition root (daemon/create-daemon.ts) collects these into the running daemon.
 */
export interface Feature {
  readonly name: string;
  /** Routes it serves. */
  readonly routes?: readonly RouteDef[];
  /** Event consumers; `critical` ones fail a publish when they fail (the webhook outbox). */
  readonly consumers?: readonly { consumer: EventConsumer; critical?: boolean }[];
  /** Figures for /metrics, read when scraped. */
  readonly gauges?: Readonly<Record<string, { help: string; read(): number }>>;
  /** Called once everything is wired, before the daemon listens. */
  start?(): Promise<void> | void;
  /** Removes what it stores for an instance that is being deleted (already out of service). */
  removeInstance?(instanceId: string): Promise<void>;
  /** Shutdown, after HTTP stopped and connections closed, in reverse start order. */
  stop?(): Promise<void>;
}
