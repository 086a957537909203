import Type from 'typebox';
import type { Logger } from 'pino';
import { DAY_MS, type Clock } from '../domain/clock.js';
import { GatewayError, errorMessage } from '../domain/errors.js';
import type { Timers, TimerHandle } from '../domain/timers.js';
import type { DaemonMode, Feature } from '../features/feature.js';
import { defineRoute } from '../http/route.js';
import { closed } from '../schemas/common.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import { utcDate, type UsageRepository } from '../storage/ports/usage.js';

/** What the usage route is built from. */
export interface UsageParts {
  mode: DaemonMode;
  usage: UsageRepository;
  instances: Pick<InstanceRepository, 'require'>;
  /** history.days: usage is kept as long as history. */
  keepDays: number;
  clock: Clock;
  timers: Timers;
  logger: Logger;
}

const DATE = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';
const Day = Type.String({ pattern: DATE, description: 'A UTC day, YYYY-MM-DD.', examples: ['2026-01-01'] });
const UsageQuery = closed({
  from: Type.Optional(Type.String({ pattern: DATE, description: 'First day (UTC, included); default the first day of this month.' })),
  to: Type.Optional(Type.String({ pattern: DATE, description: 'Last day (UTC, included); default today.' })),
});
const UsageDaySchema = closed({
  date: Day,
  sent: Type.Integer({ minimum: 0, description: 'Messages sent that day (premium ones too).' }),
  debited: Type.Integer({ minimum: 0, description: 'Credits debited for them.' }),
});
const UsageBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  from: Day,
  to: Day,
  days: Type.Array(UsageDaySchema, { description: 'Days with sends, oldest first (a day without any is left out).' }),
  sent: Type.Integer({ minimum: 0, description: 'Total of the days.' }),
  debited: Type.Integer({ minimum: 0, description: 'Total of the days.' }),
});

/** The longest range one request reads. */
const MAX_DAYS = 366;
const SWEEP_MS = DAY_MS / 4;

/** GET /api/instances/{id}/usage: sends and debits per day, kept as long as history. */
export function usageFeature(parts: UsageParts): Feature {
  let timer: TimerHandle | null = null;
  const sweep = (): void => {
    void parts.usage.sweep(utcDate(parts.clock.now() - parts.keepDays * DAY_MS)).catch((err: unknown) => parts.logger.error({ err: errorMessage(err) }, 'usage sweep failed'));
    timer = parts.timers.after(SWEEP_MS, sweep);
  };
  return {
    name: 'usage',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/api/instances/:id/usage',
        auth: 'admin',
        operationId: 'getUsage',
        summary: 'Messages sent and credits debited per day (UTC)',
        description: 'Kept as long as history (`history.days`). Counts are written within a second or two of each send; the credits themselves are exact at all times.',
        tags: ['provisioning'],
        query: UsageQuery,
        response: {
          description: 'The days with sends in the range.',
          schema: UsageBody,
          example: {
            success: true,
            instanceId: 'inst_k3J9xQ2mVb7n',
            from: '2026-01-01',
            to: '2026-01-31',
            days: [
              { date: '2026-01-02', sent: 40, debited: 40 },
              { date: '2026-01-03', sent: 12, debited: 0 },
            ],
            sent: 52,
            debited: 40,
          },
        },
        errors: ['NOT_FOUND', 'INVALID_FIELD'],
        async handle({ params, query }) {
          const record = parts.instances.require(params.id!);
          const today = utcDate(parts.clock.now());
          const to = query.to ?? today;
          const from = query.from ?? `${to.slice(0, 8)}01`;
          const span = (Date.parse(to) - Date.parse(from)) / DAY_MS;
          if (Number.isNaN(span)) throw new GatewayError('INVALID_FIELD', 'from, to: not calendar days');
          if (span < 0) throw new GatewayError('INVALID_FIELD', 'from: after to');
          if (span >= MAX_DAYS) throw new GatewayError('INVALID_FIELD', `from, to: at most ${MAX_DAYS} days at once`);
          const days = await parts.usage.days(record.id, from, to);
          return {
            success: true,
            instanceId: record.id,
            from,
            to,
            days,
            sent: days.reduce((n, d) => n + d.sent, 0),
            debited: days.reduce((n, d) => n + d.debited, 0),
          };
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
