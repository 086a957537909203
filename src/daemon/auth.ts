import type { Context, Next } from 'koa';
import { GatewayError } from '../domain/errors.js';
import type { InstanceRecord } from '../domain/types.js';
import { isInstanceId } from '../store/paths.js';
import { verifySecret } from '../store/secrets.js';
import type { AuthFailureLimiter } from './auth-limiter.js';
import type { AppDeps } from './deps.js';

export interface InstanceState {
  instance: InstanceRecord;
}

function header(ctx: Context, name: string): string | undefined {
  const v = ctx.get(name);
  return v === '' ? undefined : v;
}

/**
 * X-API-Key for `/api/:id/...`. A missing key, a wrong key and an unknown or malformed id all get
 * the same 401, so the answer never reveals whether an instance exists.
 */
export function requireInstanceKey(deps: AppDeps, limiter: AuthFailureLimiter) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const id = String(ctx.params?.id ?? '');
    const key = header(ctx, 'x-api-key');
    const record = isInstanceId(id) ? deps.instances.get(id) : undefined;
    if (!verifySecret(key, record?.keyHash) || !record) {
      limiter.fail(ctx.ip);
      throw new GatewayError('UNAUTHORIZED', 'missing or invalid X-API-Key for this instance');
    }
    (ctx.state as InstanceState).instance = record;
    await next();
  };
}

/** X-API-Secret for provisioning; the instance API key is refused here like any wrong secret. */
export function requireServerSecret(deps: AppDeps, limiter: AuthFailureLimiter) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const secret = header(ctx, 'x-api-secret');
    if (!verifySecret(secret, deps.config.serverSecretHash)) {
      limiter.fail(ctx.ip);
      throw new GatewayError('UNAUTHORIZED', 'missing or invalid X-API-Secret');
    }
    await next();
  };
}
