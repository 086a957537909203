import type { Clock } from '../domain/clock.js';
import type { Feature } from '../features/feature.js';
import type { AuthFailureLimiter } from '../http/auth-limiter.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { SessionStore } from '../storage/ports/sessions.js';
import { panelMiddleware } from './http.js';
import { PanelSessions } from './sessions.js';

/** What the panel is built from. */
export interface PanelParts {
  sessionIdleMinutes: number;
  instances: Pick<InstanceRepository, 'get'>;
  serverSecretHash(): string | null;
  clock: Clock;
  limiter: AuthFailureLimiter;
  store: SessionStore;
  /** Where the built front-end is (default dist/panel/static). */
  staticDir?: string;
}

/**
 * The web panel (`panel.enabled`): sessions (a signed-in browser calls the ordinary REST routes
 * with its cookie), sign-in at /panel/api/session and the static front-end at /panel/.
 */
export function panelFeature(parts: PanelParts): Feature & { readonly panelSessions: PanelSessions } {
  const idleMs = parts.sessionIdleMinutes * 60_000;
  const sessions = new PanelSessions({ instances: parts.instances, serverSecretHash: parts.serverSecretHash, idleMs, now: () => parts.clock.now(), store: parts.store });
  const middleware = panelMiddleware({
    sessions,
    instances: parts.instances,
    serverSecretHash: parts.serverSecretHash,
    limiter: parts.limiter,
    idleMs,
    ...(parts.staticDir !== undefined ? { staticDir: parts.staticDir } : {}),
  });
  return { name: 'panel', panelSessions: sessions, sessions, before: [middleware] };
}
