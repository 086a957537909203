import type { Logger } from 'pino';
import Type from 'typebox';
import type { GatewayConfig } from '../config/schema.js';
import { GatewayError } from '../domain/errors.js';
import { nodeIdOf } from '../storage/open.js';
import type { Feature } from '../features/feature.js';
import type { ControlRequests } from '../http/control-requests.js';
import { defineRoute } from '../http/route.js';
import { closed, IsoTime } from '../schemas/common.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { PostgresStorage } from '../storage/postgres/index.js';
import { forwardingMiddleware } from './forwarding.js';
import { readGateway } from './gateway-record.js';
import { LeaseManager } from './leases.js';

/** What a node of a gateway on PostgreSQL is built from. */
export interface ClusterParts {
  config: Pick<GatewayConfig, 'cluster' | 'host' | 'port'>;
  storage: PostgresStorage;
  instances: InstanceRepository;
  /** This node owns the instance now: run it (its connection, its pending webhooks). */
  adopt(instanceId: string): void;
  /** It moved away (or this node fenced itself): stop running it; resolves once its socket closed. */
  release(instanceId: string): Promise<void>;
  control: () => ControlRequests;
  logger: Logger;
}

/** A node of the gateway, as the rest of the daemon sees it. */
export interface ClusterNode extends Feature {
  readonly nodeId: string;
  readonly leases: LeaseManager;
  /** Whether this node runs the instance's connection now. */
  owns(instanceId: string): boolean;
  /** The owner of an instance as this node knows it (null: none now). */
  ownerOf(instanceId: string): string | null;
  /** A new instance created here: this node takes it. */
  claim(instanceId: string): Promise<boolean>;
}

const NodeList = closed({
  nodes: Type.Array(
    closed({
      nodeId: Type.String(),
      advertiseUrl: Type.String(),
      instances: Type.Integer({ minimum: 0 }),
      renewedAt: IsoTime,
    }),
  ),
});

/**
 * One node of a gateway on PostgreSQL: its leases (which instances run here), the forwarding of
 * requests about an instance to its owner, and `GET /api/cluster`. Started once the daemon
 * listens (its advertised address is known then).
 */
export async function clusterFeature(parts: ClusterParts): Promise<ClusterNode> {
  const { config, storage, instances, logger } = parts;
  const gateway = await readGateway(storage.db);
  if (!gateway) throw new GatewayError('CONFIG_INVALID', 'the database holds no gateway: run `gateway init --database URL` first');
  const secret = config.cluster.secret;
  if (secret === null) throw new GatewayError('CONFIG_INVALID', 'cluster.secret is not set: join with `gateway init --database URL --cluster-secret S` (or env GATEWAY_CLUSTER_SECRET)');
  let clusterSecretHash = gateway.clusterSecretHash;
  const nodeId = nodeIdOf(config);
  const counters = { forwarded: 0, moving: 0 };
  let leases: LeaseManager | null = null;
  const leaseManager = (advertiseUrl: string): LeaseManager =>
    new LeaseManager({
      db: storage.db,
      nodeId,
      advertiseUrl,
      ttlMs: config.cluster.leaseTtlMs,
      logger: logger.child({ part: 'leases' }),
      sessionId: storage.session.id,
      hooks: {
        instanceIds: () => instances.list().map((r) => r.id),
        acquired: (id) => parts.adopt(id),
        lost: (id) => parts.release(id),
      },
    });
  // Built at once (forwarding and ownership are asked before the node listens), started later.
  leases = leaseManager(config.cluster.advertiseUrl ?? `http://${config.host}:${config.port}`);
  storage.onResync(() => leases?.sessionRestarted());
  storage.onShared((kind) => {
    if (kind === 'gateway') void readGateway(storage.db).then((g) => (clusterSecretHash = g?.clusterSecretHash ?? clusterSecretHash));
  });
  const node: ClusterNode = {
    name: 'cluster',
    nodeId,
    get leases() {
      return leases!;
    },
    owns: (id) => leases!.owns(id),
    ownerOf: (id) => (leases!.owns(id) ? nodeId : (leases!.lease(id)?.ownerNode ?? null)),
    claim: (id) => leases!.claim(id),
    before: [
      forwardingMiddleware({
        nodeId,
        get leases() {
          return leases!;
        },
        clusterSecret: secret,
        clusterSecretHash: () => clusterSecretHash,
        exists: (id) => instances.getAny(id) !== undefined,
        refresh: async (id) => {
          await instances.refresh?.(id);
          if (!leases!.lease(id)) await leases!.refresh(id);
        },
        get control() {
          return parts.control();
        },
        logger,
        counters,
      }),
    ],
    routes: [
      defineRoute({
        method: 'GET',
        path: '/api/cluster',
        auth: 'admin',
        operationId: 'cluster',
        summary: 'The nodes of this gateway (several hosts on PostgreSQL)',
        tags: ['operations'],
        response: { description: 'The live nodes.', schema: NodeList, example: { nodes: [{ nodeId: 'gw-1:8080', advertiseUrl: 'http://10.0.0.1:8080', instances: 12, renewedAt: '2026-01-01T12:00:00.000Z' }] } },
        handle: () => ({ nodes: leases!.liveNodes().map((n) => ({ ...n })) }),
      }),
    ],
    gauges: {
      gateway_node_instances_owned: { help: 'Instances this node owns (runs the connection of).', read: () => leases!.owned.size },
      gateway_lease_renewals_total: { help: 'Lease renewals of this node.', read: () => leases!.counters.renewals },
      gateway_lease_renewal_failures_total: { help: 'Lease ticks that failed (database unavailable).', read: () => leases!.counters.renewalFailures },
      gateway_leases_acquired_total: { help: 'Leases this node took.', read: () => leases!.counters.acquired },
      gateway_leases_lost_total: { help: 'Leases this node lost (taken over, or fenced itself).', read: () => leases!.counters.lost },
      gateway_leases_handed_over_total: { help: 'Leases this node handed over (balancing).', read: () => leases!.counters.handedOver },
      gateway_forwards_total: { help: 'Requests passed on to the owner node.', read: () => counters.forwarded },
      gateway_instance_moving_total: { help: 'Requests answered 503 INSTANCE_MOVING.', read: () => counters.moving },
    },
    async listening(address) {
      if (config.cluster.advertiseUrl === null) {
        // The port is known now (port 0 picks one): advertise where this node really listens.
        leases = leaseManager(`http://${address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host}:${address.port}`);
      }
      await leases!.start();
    },
    async stop() {
      await leases?.stop();
    },
  };
  return node;
}
