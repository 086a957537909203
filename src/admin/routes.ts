import Type from 'typebox';
import type { ServerSecret } from '../config/server-secret.js';
import type { DaemonMode, Feature } from '../features/feature.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { closed } from '../schemas/common.js';
import { audited, noAudit, type AuditPart } from '../audit/audit-part.js';

/** What the gateway's own administration is built from. */
export interface AdminParts {
  mode: DaemonMode;
  dataDir: string;
  serverSecret: Pick<ServerSecret, 'rotate' | 'shown'>;
  /** The server secret's rotation goes into the audit log. */
  audit?: AuditPart;
}

/**
 * Routes only the local CLI can call, over the control socket, for what has no public REST
 * counterpart: who answers, and the server secret's rotation (`gateway init --force`).
 */
export function adminFeature(parts: AdminParts): Feature {
  return { name: 'admin', routes: adminRoutes(parts) };
}

function adminRoutes(core: AdminParts): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/control/info',
      auth: 'control',
      operationId: 'controlInfo',
      summary: 'Who answers: the daemon, or a CLI command holding the data dir',
      tags: ['control'],
      response: { description: 'The process.', schema: closed({ pid: Type.Integer(), mode: Type.String(), dataDir: Type.String() }) },
      handle: () => ({ pid: process.pid, mode: core.mode, dataDir: core.dataDir }),
    }),
    defineRoute({
      method: 'POST',
      path: '/control/server-secret',
      auth: 'control',
      operationId: 'rotateServerSecret',
      summary: 'A new server secret (`gateway init --force`); the old one stops once the CLI showed it',
      tags: ['control'],
      response: { description: 'The new secret, shown once.', schema: closed({ serverSecret: Type.String() }) },
      async handle({ principal }) {
        return { serverSecret: await audited(core.audit ?? noAudit, principal, 'secret.rotate', {}, () => core.serverSecret.rotate()) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/control/server-secret/shown',
      auth: 'control',
      operationId: 'serverSecretShown',
      summary: 'The CLI printed the new server secret: the one it replaced stops now',
      tags: ['control'],
      response: { description: 'Done.', schema: closed({ success: Type.Literal(true) }) },
      async handle() {
        await core.serverSecret.shown();
        return { success: true as const };
      },
    }),
  ];
}
