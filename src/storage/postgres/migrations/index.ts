import { sql as core } from './001-core.js';
import { sql as flows } from './002-flows.js';
import { sql as cluster } from './003-cluster.js';
import { sql as outbox } from './004-outbox.js';
import { sql as sessions } from './005-sessions.js';
import { sql as pollVotes } from './006-poll-votes.js';
import { sql as operatorsAuditUsage } from './007-operators-audit-usage.js';
import { sql as fencingOncePerStatement } from './008-fencing-once-per-statement.js';
import { sql as leaseEpoch } from './009-lease-epoch.js';
import { sql as creditBatchPlans } from './010-credit-batch-plans.js';
import { sql as epochOnEveryWrite } from './011-epoch-on-every-write.js';

export interface Migration {
  /** Applied in this order, each once; never renumbered or edited once released. */
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * Every schema version, oldest first. A port added later (webhook outbox, flow state and
 * handovers, panel sessions, node leases) adds its tables as the next migration file here.
 */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'core', sql: core },
  { version: 2, name: 'flows', sql: flows },
  { version: 3, name: 'cluster', sql: cluster },
  { version: 4, name: 'outbox', sql: outbox },
  { version: 5, name: 'sessions', sql: sessions },
  { version: 6, name: 'poll-votes', sql: pollVotes },
  { version: 7, name: 'operators-audit-usage', sql: operatorsAuditUsage },
  { version: 8, name: 'fencing-once-per-statement', sql: fencingOncePerStatement },
  { version: 9, name: 'lease-epoch', sql: leaseEpoch },
  { version: 10, name: 'credit-batch-plans', sql: creditBatchPlans },
  { version: 11, name: 'epoch-on-every-write', sql: epochOnEveryWrite },
];
