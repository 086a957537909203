import type { Middleware } from 'koa';
import type { Core } from '../core/core.js';
import type { AuthFailureLimiter } from '../http/auth-limiter.js';
import { panelMiddleware } from './http.js';
import { PanelSessions } from './sessions.js';

export interface Panel {
  /** Wired into authentication: a signed-in browser calls the ordinary REST routes. */
  readonly sessions: PanelSessions;
  /** The session API and the built front-end, before routing. */
  readonly middleware: Middleware;
}

/** The web panel (`panel.enabled`): sessions, sign-in and the static front-end at /panel/. */
export function createPanel(core: Core, limiter: AuthFailureLimiter, staticDir?: string): Panel {
  const idleMs = core.config.panel.sessionIdleMinutes * 60_000;
  const sessions = new PanelSessions({ instances: core.instances, serverSecretHash: () => core.serverSecret.hash(), idleMs, now: () => core.clock.now() });
  const middleware = panelMiddleware({
    sessions,
    instances: core.instances,
    serverSecretHash: () => core.serverSecret.hash(),
    limiter,
    idleMs,
    ...(staticDir !== undefined ? { staticDir } : {}),
  });
  return { sessions, middleware };
}
