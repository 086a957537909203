import type { Clock } from '../domain/clock.js';
import type { Feature } from '../features/feature.js';
import type { AuthFailureLimiter } from '../http/auth-limiter.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { SessionStore } from '../storage/ports/sessions.js';
import { panelMiddleware } from './http.js';
import { PanelSessions } from './sessions.js';
import type { OperatorRepository } from '../storage/ports/operators.js';
import type { AuditPart } from '../audit/audit-part.js';

/** What the panel is built from. */
export interface PanelParts {
  sessionIdleMinutes: number;
  instances: Pick<InstanceRepository, 'get'>;
  serverSecretHash(): string | null;
  clock: Clock;
  limiter: AuthFailureLimiter;
  store: SessionStore;
  /** Operator accounts: `{"operator", "password"}` sign-ins, and their sessions end when reset or removed. */
  operators?: Pick<OperatorRepository, 'get'>;
  /** Sign-ins go into the audit log. */
  audit?: AuditPart;
  /** Where the built front-end is (default dist/panel/static). */
  staticDir?: string;
}

/**
 * The web panel (`panel.enabled`): sessions (a signed-in browser calls the ordinary REST routes
 * with its cookie), sign-in at /panel/api/session and the static front-end at /panel/.
 */
export function panelFeature(parts: PanelParts): Feature & { readonly panelSessions: PanelSessions } {
  const idleMs = parts.sessionIdleMinutes * 60_000;
  const operators = parts.operators;
  const sessions = new PanelSessions({
    instances: parts.instances,
    serverSecretHash: parts.serverSecretHash,
    idleMs,
    now: () => parts.clock.now(),
    store: parts.store,
    ...(operators ? { operatorHash: async (name: string) => (await operators.get(name))?.passwordHash ?? null } : {}),
  });
  const middleware = panelMiddleware({
    sessions,
    instances: parts.instances,
    serverSecretHash: parts.serverSecretHash,
    limiter: parts.limiter,
    idleMs,
    ...(operators ? { operators } : {}),
    ...(parts.audit ? { audit: parts.audit } : {}),
    ...(parts.staticDir !== undefined ? { staticDir: parts.staticDir } : {}),
  });
  return { name: 'panel', panelSessions: sessions, sessions, before: [middleware] };
}
