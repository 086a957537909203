import Type from 'typebox';
import type { Logger } from 'pino';
import { DAY_MS, type Clock } from '../domain/clock.js';
import { errorMessage } from '../domain/errors.js';
import type { Timers, TimerHandle } from '../domain/timers.js';
import type { DaemonMode, Feature } from '../features/feature.js';
import { defineRoute } from '../http/route.js';
import { InstanceId, IsoTime, closed } from '../schemas/common.js';
import type { AuditLog } from '../storage/ports/audit.js';

/** What reading (and bounding) the audit log needs. */
export interface AuditFeatureParts {
  mode: DaemonMode;
  log: AuditLog;
  /** audit.keepDays */
  keepDays: number;
  clock: Clock;
  timers: Timers;
  logger: Logger;
}

/** Entries older than keepDays are removed this often (and once at start-up). */
const SWEEP_MS = DAY_MS / 4;

const AuditQuerySchema = closed({
  instanceId: Type.Optional(InstanceId),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`secret`, `instance:ID` or `operator:NAME`.', examples: ['operator:ann'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page.' })),
});

const AuditEntrySchema = closed({
  at: IsoTime,
  actor: Type.String({ description: '`secret` (the server secret or the local CLI), `instance:ID` (its API key or panel session), `operator:NAME`; `anonymous` for a refused sign-in of an unknown name.' }),
  action: Type.String({ description: 'What was done (README, "Audit log", lists every action).', examples: ['credits.add'] }),
  instanceId: Type.Optional(InstanceId),
  target: Type.Optional(Type.String({ description: 'What it was done to: a chat id, an operator, a delivery. Never a secret or a message body.' })),
  outcome: Type.String({ description: '`ok`, or the error code it was refused with.', examples: ['ok', 'INSUFFICIENT_CREDITS'] }),
});
const AuditBody = closed({ success: Type.Literal(true), entries: Type.Array(AuditEntrySchema), nextCursor: Type.Union([Type.String(), Type.Null()]) });

/** GET /api/audit, and the bound by age of what it reads. */
export function auditFeature(parts: AuditFeatureParts): Feature {
  let timer: TimerHandle | null = null;
  const sweep = (): void => {
    void parts.log.sweep(parts.clock.now() - parts.keepDays * DAY_MS).catch((err: unknown) => parts.logger.error({ err: errorMessage(err) }, 'audit log sweep failed'));
    timer = parts.timers.after(SWEEP_MS, sweep);
  };
  return {
    name: 'audit',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/api/audit',
        auth: 'admin-or-instance',
        operationId: 'listAudit',
        summary: 'The audit log: who did what, newest first, a page at a time',
        description:
          'With the server secret (or an admin panel session): every entry, filtered by `instanceId` and `actor`. With an instance\'s X-API-Key (its id in `instanceId`): that instance\'s entries only. Kept `audit.keepDays` (90). Never a secret or a message body.',
        tags: ['audit'],
        query: AuditQuerySchema,
        response: {
          description: 'A page of entries; pass nextCursor for the next one (null at the end).',
          schema: AuditBody,
          example: {
            success: true,
            entries: [
              { at: '2026-01-02T09:30:00.000Z', actor: 'operator:ann', action: 'handover.reply', instanceId: 'inst_k3J9xQ2mVb7n', target: '15551234567@s.whatsapp.net', outcome: 'ok' },
              { at: '2026-01-02T09:00:00.000Z', actor: 'secret', action: 'credits.add', instanceId: 'inst_k3J9xQ2mVb7n', target: '-5', outcome: 'INSUFFICIENT_CREDITS' },
            ],
            nextCursor: 'MjAyNi0wMS0wMjo0Mg',
          },
        },
        errors: ['INVALID_FIELD'],
        async handle({ query, principal, instance }) {
          // An instance's key or session reads its own instance's entries only.
          const own = principal.kind === 'instance-key' || (principal.kind === 'session' && principal.role !== 'admin') ? instance.id : undefined;
          const page = await parts.log.query({
            limit: query.limit ?? 50,
            ...(own !== undefined ? { instanceId: own } : query.instanceId !== undefined ? { instanceId: query.instanceId } : {}),
            ...(query.actor !== undefined ? { actor: query.actor } : {}),
            ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          });
          return { success: true, entries: page.entries, nextCursor: page.nextCursor };
        },
      }),
    ],
    start() {
      if (parts.mode === 'daemon') sweep();
    },
    async stop() {
      timer?.cancel();
      timer = null;
    },
  };
}
