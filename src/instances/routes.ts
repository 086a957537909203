import { drawQr } from './qr-image.js';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionManager } from '../connection/manager.js';
import type { DaemonMode, Feature } from '../features/feature.js';
import type { StatusReporter } from '../status/status-reporter.js';
import type { InstanceRepository } from '../storage/ports/instances.js';

/** What the instances feature is built from. */
export interface InstancesParts {
  mode: DaemonMode;
  config: Pick<GatewayConfig, 'webhooks'>;
  instances: InstanceRepository;
  status: Pick<StatusReporter, 'view'>;
  manager: Pick<ConnectionManager, 'get'>;
  lifecycle: InstanceLifecycle;
  logger: Logger;
  /** Several hosts: the node that runs the instance now (null: none, or one host). */
  ownerOf: (instanceId: string) => string | null;
  /** Creations, deletions, logouts, key rotations and plan changes go into the audit log. */
  audit?: AuditPart;
}
import { GatewayError } from '../domain/errors.js';
import type { InstanceRecord } from '../schemas/instance.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { closed } from '../schemas/common.js';
import {
  CreateInstanceInput,
  CreditsInput,
  DeletedBody,
  InstanceBody,
  InstanceListBody,
  InstanceWithKeyBody,
  ListInstancesQuery,
  PairingCodeInput,
  PremiumInput,
  StatusBody,
} from '../schemas/instance.js';
import Type, { type Static } from 'typebox';
import { applyWebhookChange, webhookView } from '../webhooks/settings.js';
import type { InstanceLifecycle } from './lifecycle.js';
import type { Context } from 'koa';
import { afterDelivery } from '../http/after-delivery.js';
import { hashSecret } from '../domain/secrets.js';
import { actorOf, audited, noAudit, type AuditPart } from '../audit/audit-part.js';

/** An instance as the admin routes and the CLI show it. */
export function instanceView(core: Pick<InstancesParts, 'status' | 'ownerOf'>, record: InstanceRecord) {
  const s = core.status.view(record);
  return {
    instanceId: record.id,
    name: record.name,
    owner: record.owner,
    sandbox: record.sandbox,
    status: s.status,
    reason: s.reason,
    premium: s.premium,
    premiumUntil: s.premiumUntil,
    credits: s.credits,
    quotaRemaining: s.quotaRemaining,
    createdAt: record.createdAt,
    webhook: webhookView(record.webhook),
    node: core.ownerOf(record.id),
  };
}

const EXAMPLE_VIEW = {
  success: true,
  instanceId: 'inst_k3J9xQ2mVb7n',
  name: 'shop',
  owner: 'acme',
  sandbox: false,
  status: 'connected',
  reason: 'connected',
  premium: true,
  premiumUntil: '2026-02-01T12:00:00.000Z',
  credits: 0,
  quotaRemaining: 'unlimited',
  createdAt: '2026-01-01T12:00:00.000Z',
  webhook: { url: 'https://example.com/hook', signed: true, events: 'all', headers: [], filters: { ignoreGroups: false, onlyChats: null, ignoreChats: [] } },
  node: null,
};

/** Cursor = the last instance id of a page; ids are opaque, so base64url keeps it opaque too. */
const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');
const decodeCursor = (cursor: string): string => Buffer.from(cursor, 'base64url').toString('utf8');

const InstanceKeyBody = closed({ success: Type.Literal(true), instanceId: Type.String(), apiKey: Type.String() });
const LifecycleBody = closed({ success: Type.Literal(true), instanceId: Type.String(), status: StatusBody.properties.status });
const CodeBody = closed({ success: Type.Literal(true), instanceId: Type.String(), code: Type.String({ description: 'Eight characters to type on the phone.' }) });
const QrBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  status: Type.Literal('qr_code_generated'),
  qr: Type.String({ description: 'The raw QR payload.' }),
  qrImage: Type.String({ description: 'The QR as a PNG data URL.' }),
});

/** Provisioning (server secret) and the instance's own status, QR and lifecycle (instance key). */
/** Provisioning, status, QR and the instance lifecycle over REST. */
export function instancesFeature(core: InstancesParts): Feature {
  return { name: 'instances', routes: instanceRoutes(core, core.lifecycle) };
}

function instanceRoutes(core: InstancesParts, lifecycle: InstanceLifecycle): RouteDef[] {
  /**
   * The old key stops once the answer with the new one was delivered. A CLI command without a
   * daemon is itself the daemon: it retires the old key after printing the new one (control route
   * below), so a kill between the two never loses both.
   */
  const retireWhenDelivered = (koa: Context, shown: () => Promise<void>): void => {
    if (core.mode !== 'daemon') return;
    afterDelivery(koa, shown, (err) => core.logger.error({ err }, 'could not retire a rotated key'));
  };
  const view = (record: InstanceRecord) => ({ success: true as const, ...instanceView(core, record) });
  const audit = core.audit ?? noAudit;
  const createInstance = async (body: Static<typeof CreateInstanceInput>) => {
    if (body.webhookUrl === undefined && (body.webhookSecret !== undefined || body.webhookEvents !== undefined || body.webhookHeaders !== undefined || body.webhookFilters !== undefined)) {
      throw new GatewayError('MISSING_FIELD', 'webhookUrl is required when webhookSecret, webhookEvents, webhookHeaders or webhookFilters is given');
    }
    const webhook =
      body.webhookUrl === undefined
        ? null
        : await applyWebhookChange(
            null,
            { url: body.webhookUrl, secret: body.webhookSecret, events: body.webhookEvents, headers: body.webhookHeaders, filters: body.webhookFilters },
            core.config.webhooks.allowPrivateTargets,
            { url: 'webhookUrl', secret: 'webhookSecret', headers: 'webhookHeaders' },
          );
    const created = await lifecycle.create(
      {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.owner !== undefined ? { owner: body.owner } : {}),
        ...(body.sandbox !== undefined ? { sandbox: body.sandbox } : {}),
        ...(body.premiumDays !== undefined ? { premiumDays: body.premiumDays } : {}),
        webhook,
      },
      body.credits ?? 0,
    );
    return { ...view(created.record), apiKey: created.apiKey };
  };
  const connectionOf = (id: string) => {
    const entry = core.manager.get(id);
    if (!entry) throw new GatewayError('CONNECTION_NOT_READY', 'the instance has no connection in this process (is the daemon running?)');
    return entry.connection;
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/api/instances/create',
      auth: 'admin',
      operationId: 'createInstance',
      summary: 'Create an instance',
      description: 'The first instance created for an owner (an absent owner is one shared default owner) gets plans.trialDays days of premium, exactly once. The API key is shown once.',
      tags: ['provisioning'],
      body: CreateInstanceInput,
      example: { name: 'shop', owner: 'acme', webhookUrl: 'https://example.com/hook', webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
      status: 201,
      response: { description: 'Created; `apiKey` is shown this once.', schema: InstanceWithKeyBody, example: { ...EXAMPLE_VIEW, apiKey: 'gw_live_...' } },
      errors: ['MISSING_FIELD', 'INVALID_FIELD'],
      async handle({ body, principal }) {
        // Its id is known once it exists: recorded here rather than through audited().
        try {
          const created = await createInstance(body);
          await audit.record({ actor: actorOf(principal), action: 'instance.create', instanceId: created.instanceId, outcome: 'ok' });
          return created;
        } catch (err) {
          await audit.record({ actor: actorOf(principal), action: 'instance.create', outcome: err instanceof GatewayError ? err.code : 'INTERNAL' });
          throw err;
        }
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/api/instances',
      auth: 'admin',
      operationId: 'listInstances',
      summary: 'List instances, oldest first, a page at a time',
      tags: ['provisioning'],
      query: ListInstancesQuery,
      response: { description: 'A page of instances; pass nextCursor for the next one (null at the end).', schema: InstanceListBody },
      errors: ['INVALID_FIELD'],
      handle({ query }) {
        const limit = query.limit ?? 100;
        let all = core.instances.list();
        if (query.owner !== undefined) all = all.filter((r) => r.owner === query.owner);
        let start = 0;
        if (query.cursor !== undefined) {
          const after = decodeCursor(query.cursor);
          start = all.findIndex((r) => r.id === after) + 1;
          if (start === 0) throw new GatewayError('INVALID_FIELD', 'cursor: unknown or expired cursor; start again without it');
        }
        const page = all.slice(start, start + limit);
        const more = start + limit < all.length;
        return { success: true, instances: page.map((r) => instanceView(core, r)), nextCursor: more && page.length > 0 ? encodeCursor(page[page.length - 1]!.id) : null };
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/api/instances/:id',
      auth: 'admin',
      operationId: 'getInstance',
      summary: 'Read one instance',
      tags: ['provisioning'],
      response: { description: 'The instance.', schema: InstanceBody, example: EXAMPLE_VIEW },
      errors: ['NOT_FOUND'],
      handle: ({ params }) => view(core.instances.require(params.id!)),
    }),

    defineRoute({
      method: 'DELETE',
      path: '/api/instances/:id',
      auth: 'admin',
      operationId: 'deleteInstance',
      summary: 'Delete an instance: log its device out and remove all its data',
      tags: ['provisioning'],
      response: { description: 'Deleted; a later GET answers 404.', schema: DeletedBody },
      errors: ['NOT_FOUND', 'STORAGE_UNAVAILABLE'],
      async handle({ params, principal }) {
        const result = await audited(audit, principal, 'instance.delete', { instanceId: params.id! }, () => lifecycle.delete(params.id!));
        return { success: true, instanceId: result.instanceId, deleted: true, logout: result.logout };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/instances/:id/rotate-key',
      auth: 'admin',
      operationId: 'adminRotateKey',
      summary: 'Issue a new API key for an instance (the old one stops at once)',
      tags: ['provisioning'],
      response: { description: 'The instance and its new key, shown once.', schema: InstanceWithKeyBody },
      errors: ['NOT_FOUND'],
      async handle({ params, koa, principal }) {
        const { apiKey, shown } = await audited(audit, principal, 'key.rotate', { instanceId: params.id! }, () => lifecycle.rotateKey(params.id!));
        retireWhenDelivered(koa, shown);
        return { ...view(core.instances.require(params.id!)), apiKey };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/instances/:id/credits',
      auth: 'admin',
      operationId: 'addCredits',
      summary: 'Add credits to an instance, or refund them (a negative add)',
      tags: ['provisioning'],
      body: CreditsInput,
      example: { add: 100 },
      response: { description: 'The instance after the change.', schema: InstanceBody },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INSUFFICIENT_CREDITS', 'STORAGE_UNAVAILABLE'],
      async handle({ params, body, principal }) {
        const action = body.add < 0 ? 'credits.refund' : 'credits.add';
        await audited(audit, principal, action, { instanceId: params.id!, target: body.add > 0 ? `+${body.add}` : String(body.add) }, () => lifecycle.addCredits(params.id!, body.add));
        return view(core.instances.require(params.id!));
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/instances/:id/premium',
      auth: 'admin',
      operationId: 'grantPremium',
      summary: 'Extend premium by N days (from now, or from its current end)',
      tags: ['provisioning'],
      body: PremiumInput,
      example: { days: 30 },
      response: { description: 'The instance after the change.', schema: InstanceBody },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD'],
      async handle({ params, body, principal }) {
        return view(await audited(audit, principal, 'premium.grant', { instanceId: params.id!, target: `+${body.days} days` }, () => lifecycle.grantPremium(params.id!, body.days)));
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/api/:id/status',
      auth: 'instance',
      operationId: 'getStatus',
      summary: 'Connection status and plan',
      tags: ['instance'],
      response: {
        description: 'The status.',
        schema: StatusBody,
        example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', status: 'connected', reason: 'connected', premium: true, premiumUntil: '2026-02-01T12:00:00.000Z', quotaRemaining: 'unlimited' },
      },
      handle({ instance }) {
        const s = core.status.view(instance);
        return { success: true, instanceId: instance.id, status: s.status, reason: s.reason, premium: s.premium, premiumUntil: s.premiumUntil, quotaRemaining: s.quotaRemaining };
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/api/:id/qr-code',
      auth: 'instance',
      operationId: 'getQrCode',
      summary: 'The pairing QR, while the status is qr_code_generated',
      tags: ['instance'],
      response: { description: 'The QR.', schema: QrBody },
      errors: ['QR_NOT_AVAILABLE'],
      async handle({ instance }) {
        const s = core.status.view(instance);
        const qr = core.manager.get(instance.id)?.connection.qr ?? null;
        if (s.status !== 'qr_code_generated' || qr === null) throw new GatewayError('QR_NOT_AVAILABLE', `no QR code while the instance is ${s.status}`);
        const qrImage = await drawQr(qr);
        return { success: true, instanceId: instance.id, status: 'qr_code_generated', qr, qrImage };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/logout',
      auth: 'instance',
      operationId: 'logout',
      summary: 'Unlink the device; the instance stays and shows a new QR',
      tags: ['instance'],
      response: { description: 'Logged out.', schema: LifecycleBody },
      errors: ['CONNECTION_NOT_READY'],
      async handle({ instance, principal }) {
        await audited(audit, principal, 'instance.logout', { instanceId: instance.id }, async () => {
          const connection = connectionOf(instance.id);
          await connection.logout({ timeoutMs: 0 });
          connection.start();
        });
        return { success: true, instanceId: instance.id, status: core.status.view(instance).status };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/restart',
      auth: 'instance',
      operationId: 'restart',
      summary: 'Reconnect now (also after the connection gave up)',
      tags: ['instance'],
      response: { description: 'Reconnecting.', schema: LifecycleBody },
      errors: ['CONNECTION_NOT_READY'],
      async handle({ instance }) {
        const connection = connectionOf(instance.id);
        await connection.stop();
        connection.start();
        return { success: true, instanceId: instance.id, status: core.status.view(instance).status };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/pairing-code',
      auth: 'instance',
      operationId: 'pairingCode',
      summary: 'Pair by code instead of QR: returns the code to type on the phone',
      description:
        'Waits (up to 60 s) for WhatsApp to offer pairing. When WhatsApp cannot be reached at all (DNS, refused, TLS) it answers 503 `CONNECTION_NOT_READY` at once, the message naming the cause (`WhatsApp cannot be reached: getaddrinfo ENOTFOUND web.whatsapp.com`).',
      tags: ['instance'],
      body: PairingCodeInput,
      example: { phone: '+15551234567' },
      response: { description: 'The code.', schema: CodeBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', code: 'ABCD1234' } },
      errors: ['MISSING_FIELD', 'INVALID_PHONE', 'ALREADY_CONNECTED', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        const connection = connectionOf(instance.id);
        if (connection.status === 'connected') throw new GatewayError('ALREADY_CONNECTED', 'the instance is connected; log it out first to pair another phone');
        if (!connection.requestPairingCode) throw new GatewayError('INVALID_FIELD', 'this instance pairs by QR only');
        const code = await connection.requestPairingCode(body.phone);
        return { success: true, instanceId: instance.id, code };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/control/instances/:id/key-shown',
      auth: 'control',
      operationId: 'keyShown',
      summary: 'The CLI printed a rotated key: the key it replaced stops now',
      tags: ['control'],
      body: closed({ apiKey: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: { description: 'Done.', schema: closed({ success: Type.Literal(true) }) },
      async handle({ params, body }) {
        await lifecycle.keyShown(params.id!, hashSecret(body.apiKey));
        return { success: true as const };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/rotate-key',
      auth: 'instance',
      operationId: 'rotateKey',
      summary: 'Issue a new API key; the old one stops at once',
      tags: ['instance'],
      response: { description: 'The new key, shown once.', schema: InstanceKeyBody },
      async handle({ instance, koa, principal }) {
        const { apiKey, shown } = await audited(audit, principal, 'key.rotate', { instanceId: instance.id }, () => lifecycle.rotateKey(instance.id));
        retireWhenDelivered(koa, shown);
        return { success: true, instanceId: instance.id, apiKey };
      },
    }),
  ];
}
