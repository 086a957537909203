import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { GatewayError } from '../domain/errors.js';
import type { Principal } from '../http/route.js';
import type { AuditEntry, AuditLog } from '../storage/ports/audit.js';

/** One action to record: the time is added here. Never a secret or a message body. */
export type AuditRecord = Omit<AuditEntry, 'at'>;

/**
 * What a feature records the actions it performs with. `record` never throws: the action already
 * happened (or was refused), and a log that cannot be written is reported in the daemon log
 * instead of failing the request.
 */
export interface AuditPart {
  record(entry: AuditRecord): Promise<void>;
}

/** The audit part over the storage port. */
export function auditPart(log: AuditLog, clock: Clock, logger: Logger): AuditPart {
  return {
    async record(entry) {
      try {
        // Ids and targets come from requests: bounded, whatever a caller sends.
        await log.append({
          at: new Date(clock.now()).toISOString(),
          actor: entry.actor.slice(0, 200),
          action: entry.action,
          ...(entry.instanceId !== undefined ? { instanceId: entry.instanceId.slice(0, 200) } : {}),
          ...(entry.target !== undefined ? { target: entry.target.slice(0, 200) } : {}),
          outcome: entry.outcome,
        });
      } catch (err) {
        logger.error({ err, action: entry.action, actor: entry.actor, instanceId: entry.instanceId }, 'could not write an audit entry');
      }
    },
  };
}

/** Records nothing (a CLI command's offline daemon still records: this is for tests and tools). */
export const noAudit: AuditPart = { record: async () => undefined };

/** Who did it, as the audit log names them: `secret`, `instance:ID` or `operator:NAME`. */
export function actorOf(p: Principal): string {
  switch (p.kind) {
    case 'instance-key':
      return `instance:${p.instanceId}`;
    case 'session':
      if (p.role === 'instance') return `instance:${p.instanceId}`;
      if (p.role === 'agent') return `operator:${p.operator}`;
      return p.operator !== undefined ? `operator:${p.operator}` : 'secret';
    // The local CLI is trusted like the server secret (it has the data dir).
    case 'control':
    case 'server-secret':
      return 'secret';
    case 'anonymous':
      return 'anonymous';
  }
}

/**
 * Runs `fn` and records the action with its outcome: `ok`, or the error code it was refused with
 * (then rethrown). Input errors found before the handler runs (400) are not actions and are not
 * recorded.
 */
export async function audited<T>(audit: AuditPart, principal: Principal, action: string, where: { instanceId?: string; target?: string }, fn: () => Promise<T> | T): Promise<T> {
  const base = { actor: actorOf(principal), action, ...(where.instanceId !== undefined ? { instanceId: where.instanceId } : {}), ...(where.target !== undefined ? { target: where.target } : {}) };
  try {
    const result = await fn();
    await audit.record({ ...base, outcome: 'ok' });
    return result;
  } catch (err) {
    await audit.record({ ...base, outcome: err instanceof GatewayError ? err.code : 'INTERNAL' });
    throw err;
  }
}
