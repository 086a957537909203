import type { Middleware } from 'koa';
import type { EventConsumer } from '../events/types.js';
import type { SessionResolver } from '../http/auth.js';
import type { RouteDef } from '../http/route.js';

/**
 * Whether this process is the daemon (connections open, deliveries running) or a CLI command
 * working on the data dir while no daemon runs (nothing is started unless a command asks).
 */
export type DaemonMode = 'daemon' | 'offline';

/**
 * The contract between the daemon and its features (instances, sending, messages, webhooks, flows,
 * live events, pairing, metrics, the panel, ...). A feature is built from only the parts it names
 * (its factory's parameter) and returns what it adds; it changes nothing it was given. The
 * composition root (daemon/create-daemon.ts) builds each one and collects them into the daemon.
 */
export interface Feature {
  readonly name: string;
  /** Routes it serves. */
  readonly routes?: readonly RouteDef[];
  /** Middleware that runs before routing (the panel's sign-in and static files). */
  readonly before?: readonly Middleware[];
  /** Who a request without a key is (the panel's signed-in browsers). */
  readonly sessions?: SessionResolver;
  /** Event consumers; `critical` ones fail a publish when they fail (the webhook outbox). */
  readonly consumers?: readonly { consumer: EventConsumer; critical?: boolean }[];
  /** Figures for /metrics, read when scraped. */
  readonly gauges?: Readonly<Record<string, { help: string; read(): number }>>;
  /** Called once everything is wired, before the daemon listens. */
  start?(): Promise<void> | void;
  /** Removes what it keeps for an instance that is being deleted (already out of service). */
  removeInstance?(instanceId: string): Promise<void>;
  /** The daemon listens now (on this address): what needs the real port starts here. */
  listening?(address: { host: string; port: number }): Promise<void> | void;
  /** Ends long-lived answers (live event streams) so HTTP can drain. */
  closeStreams?(): void;
  /** Shutdown, after HTTP stopped and connections closed, in reverse start order. */
  stop?(): Promise<void>;
}
