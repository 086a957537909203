import { GatewayError } from '../domain/errors.js';
import type { Clock } from '../domain/clock.js';
import { generatePassword, hashPassword } from '../domain/passwords.js';
import { isOperatorName } from '../domain/operator-name.js';
import type { Feature } from '../features/feature.js';
import { audited, type AuditPart } from '../audit/audit-part.js';
import { defineRoute } from '../http/route.js';
import { CreateOperatorInput, OperatorDeletedBody, OperatorListBody, OperatorWithPasswordBody } from '../schemas/operator.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { OperatorRecord, OperatorRepository } from '../storage/ports/operators.js';

/** What operator administration is built from. */
export interface OperatorsParts {
  operators: OperatorRepository;
  instances: Pick<InstanceRepository, 'get'>;
  clock: Clock;
  audit: AuditPart;
  /** An operator's password changed or it was removed (hash null): its panel sessions end. */
  changed?: (name: string, hash: string | null) => void;
}

const view = ({ passwordHash: _h, ...rest }: OperatorRecord) => rest;

const EXAMPLE = { name: 'ann', role: 'agent', instances: ['inst_k3J9xQ2mVb7n'], createdAt: '2026-01-01T12:00:00.000Z', passwordChangedAt: '2026-01-01T12:00:00.000Z' };

function requireName(name: string): string {
  if (!isOperatorName(name)) throw new GatewayError('NOT_FOUND', `no operator ${JSON.stringify(name.slice(0, 64))}`);
  return name;
}

/**
 * Operators: named panel accounts beside the server secret (which stays the break-glass admin).
 * Managed with the server secret (or the local CLI); each change goes into the audit log.
 */
export function operatorsFeature(parts: OperatorsParts): Feature {
  const { operators, audit } = parts;
  return {
    name: 'operators',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/api/operators',
        auth: 'admin',
        operationId: 'listOperators',
        summary: 'List operators (never their passwords)',
        tags: ['operators'],
        response: { description: 'Every operator, by name.', schema: OperatorListBody, example: { success: true, operators: [EXAMPLE, { ...EXAMPLE, name: 'boss', role: 'admin', instances: [] }] } },
        async handle() {
          return { success: true, operators: (await operators.list()).map(view) };
        },
      }),
      defineRoute({
        method: 'POST',
        path: '/api/operators',
        auth: 'admin',
        operationId: 'createOperator',
        summary: 'Add an operator; its one-time password is in the answer (shown once)',
        description: 'An `agent` sees only the inbox, chats and read-only status of its `instances`; an `admin` sees everything. The password is stored as a scrypt hash.',
        tags: ['operators'],
        body: CreateOperatorInput,
        example: { name: 'ann', role: 'agent', instances: ['inst_k3J9xQ2mVb7n'] },
        status: 201,
        response: { description: 'Created; `password` is shown this once.', schema: OperatorWithPasswordBody, example: { success: true, ...EXAMPLE, password: 'Vb3kQ9xZr2Lm7PcW4nTy8sHd' } },
        errors: ['MISSING_FIELD', 'INVALID_FIELD', 'ALREADY_EXISTS', 'STORAGE_UNAVAILABLE'],
        async handle({ body, principal }) {
          return audited(audit, principal, 'operator.add', { target: body.name }, async () => {
            const instances = body.instances ?? [];
            if (body.role === 'admin' && instances.length > 0) throw new GatewayError('INVALID_FIELD', 'instances: an admin operator sees every instance; only an agent has instances');
            // The secret holder may know which instances exist: name the unknown one.
            const unknown = instances.find((id) => parts.instances.get(id) === undefined);
            if (unknown !== undefined) throw new GatewayError('INVALID_FIELD', `instances: no instance ${unknown}`);
            const password = generatePassword();
            const at = new Date(parts.clock.now()).toISOString();
            const record: OperatorRecord = { name: body.name, role: body.role, instances, passwordHash: await hashPassword(password), createdAt: at, passwordChangedAt: at };
            if (!(await operators.create(record))) throw new GatewayError('ALREADY_EXISTS', `an operator ${body.name} exists already (reset its password, or remove it first)`);
            return { success: true as const, ...view(record), password };
          });
        },
      }),
      defineRoute({
        method: 'POST',
        path: '/api/operators/:name/reset',
        auth: 'admin',
        operationId: 'resetOperator',
        summary: "Give an operator a new one-time password (its sessions end)",
        tags: ['operators'],
        response: { description: 'The new password, shown once.', schema: OperatorWithPasswordBody, example: { success: true, ...EXAMPLE, password: 'Qm8vT2pXw5Zr9LcB3nHk7sJd' } },
        errors: ['NOT_FOUND', 'STORAGE_UNAVAILABLE'],
        async handle({ params, principal }) {
          const name = requireName(params.name!);
          return audited(audit, principal, 'operator.reset', { target: name }, async () => {
            const password = generatePassword();
            const hash = await hashPassword(password);
            const record = await operators.setPassword(name, hash, new Date(parts.clock.now()).toISOString());
            if (!record) throw new GatewayError('NOT_FOUND', `no operator ${JSON.stringify(name)}`);
            parts.changed?.(name, hash);
            return { success: true as const, ...view(record), password };
          });
        },
      }),
      defineRoute({
        method: 'DELETE',
        path: '/api/operators/:name',
        auth: 'admin',
        operationId: 'deleteOperator',
        summary: 'Remove an operator (its sessions end)',
        tags: ['operators'],
        response: { description: 'Removed.', schema: OperatorDeletedBody, example: { success: true, name: 'ann', deleted: true } },
        errors: ['NOT_FOUND', 'STORAGE_UNAVAILABLE'],
        async handle({ params, principal }) {
          const name = requireName(params.name!);
          return audited(audit, principal, 'operator.remove', { target: name }, async () => {
            if (!(await operators.remove(name))) throw new GatewayError('NOT_FOUND', `no operator ${JSON.stringify(name)}`);
            parts.changed?.(name, null);
            return { success: true as const, name, deleted: true as const };
          });
        },
      }),
    ],
  };
}
