import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import QRCode from 'qrcode';
import { GatewayError } from '../../domain/errors.js';
import type { InstanceRecord } from '../../domain/types.js';
import { effectiveStatus, isPremium, quotaRemaining } from '../../plans/rules.js';
import type { InstanceState } from '../auth.js';
import type { AppDeps } from '../deps.js';

type Auth = (ctx: Context, next: Next) => Promise<void>;

/** The plan and connection view of one instance, as `status` and `instances/create` show it. */
export async function instanceView(deps: AppDeps, record: InstanceRecord) {
  const now = deps.clock.now();
  const balance = await deps.ledger.balance(record.id);
  const connection = deps.manager.get(record.id)?.connection;
  const status = effectiveStatus(record, balance, now, connection?.status ?? 'initializing');
  return {
    instanceId: record.id,
    status,
    premium: isPremium(record, now),
    premiumUntil: record.premiumUntil,
    quotaRemaining: quotaRemaining(record, balance, now),
    reason: status === 'requires_premium' ? 'premium expired and no credits remain' : (connection?.reason ?? null),
  };
}

export function statusRoutes(router: Router, deps: AppDeps, auth: Auth): void {
  router.get('/api/:id/status', auth, async (ctx) => {
    const { instance } = ctx.state as InstanceState;
    const view = await instanceView(deps, instance);
    ctx.body = { success: true, ...view };
  });

  router.get('/api/:id/qr-code', auth, async (ctx) => {
    const { instance } = ctx.state as InstanceState;
    const view = await instanceView(deps, instance);
    const qr = deps.manager.get(instance.id)?.connection.qr ?? null;
    if (view.status !== 'qr_code_generated' || qr === null) {
      throw new GatewayError('QR_NOT_AVAILABLE', `no QR code while the instance is ${view.status}`);
    }
    const qrImage = await QRCode.toDataURL(qr, { errorCorrectionLevel: 'L', margin: 2, width: 264 });
    ctx.body = { success: true, instanceId: instance.id, status: view.status, qr, qrImage };
  });
}
