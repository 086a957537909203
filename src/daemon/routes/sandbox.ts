import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { SandboxConnection } from '../../connection/sandbox.js';
import { GatewayError } from '../../domain/errors.js';
import type { InstanceState } from '../auth.js';
import { MAX_TEXT, bodyObject, jsonBody, optionalString, requiredPhone, requiredString } from '../body.js';
import type { AppDeps } from '../deps.js';

type Auth = (ctx: Context, next: Next) => Promise<void>;

function sandboxOf(ctx: Context, deps: AppDeps): SandboxConnection {
  const { instance } = ctx.state as InstanceState;
  const connection = deps.manager.get(instance.id)?.connection;
  if (!instance.sandbox || !(connection instanceof SandboxConnection)) {
    throw new GatewayError('NOT_FOUND', 'sandbox routes exist only for sandbox instances');
  }
  return connection;
}

/** Drive a simulated connection: scan, disconnect, receive a message, list what was sent. */
export function sandboxRoutes(router: Router, deps: AppDeps, auth: Auth): void {
  router.post('/api/:id/sandbox/scan', auth, async (ctx) => {
    const conn = sandboxOf(ctx, deps);
    await conn.scan();
    ctx.body = { success: true, instanceId: conn.instanceId, status: conn.status };
  });

  router.post('/api/:id/sandbox/disconnect', auth, async (ctx) => {
    const conn = sandboxOf(ctx, deps);
    conn.disconnect();
    ctx.body = { success: true, instanceId: conn.instanceId, status: conn.status };
  });

  router.post('/api/:id/sandbox/inbound', auth, jsonBody, async (ctx) => {
    const conn = sandboxOf(ctx, deps);
    const body = bodyObject(ctx);
    const from = requiredPhone(body.from, 'from');
    const message = requiredString(body, 'message', MAX_TEXT);
    const name = optionalString(body, 'name', 256);
    const received = await conn.inbound({ from, message, ...(name ? { name } : {}) });
    ctx.body = { success: true, instanceId: conn.instanceId, messageId: received.messageId };
  });

  router.get('/api/:id/sandbox/sent', auth, async (ctx) => {
    const conn = sandboxOf(ctx, deps);
    ctx.body = { success: true, instanceId: conn.instanceId, messages: conn.sent() };
  });
}
