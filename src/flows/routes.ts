import type { RouteExtension } from '../daemon/app.js';
import type { InstanceState } from '../daemon/auth.js';
import { bodyObject, jsonBody, requiredPhone } from '../daemon/body.js';
import { GatewayError } from '../domain/errors.js';
import type { FlowService } from './service.js';
import { handoverView } from './store.js';
import type { StoredFlow } from './types.js';
import { FlowValidationError } from './validate.js';

function flowBody(instanceId: string, stored: StoredFlow) {
  return { success: true, instanceId, flow: stored.flow, revision: stored.revision, updatedAt: stored.updatedAt };
}


/**
 * PUT/GET/DELETE /api/{id}/flow, GET /api/{id}/handovers and POST /api/{id}/handover/release,
 * all with the instance key. Check order as DESIGN.md: auth (401), then input (400/413/415).
 */
export function flowRoutes(service: FlowService): RouteExtension {
  return (router, { auth }) => {
    router.put('/api/:id/flow', auth, jsonBody, async (ctx) => {
      const { instance } = ctx.state as InstanceState;
      const body = bodyObject(ctx);
      let stored: StoredFlow;
      try {
        stored = await service.setFlow(instance.id, body);
      } catch (err) {
        if (err instanceof FlowValidationError) throw new GatewayError('INVALID_FIELD', err.message);
        throw err;
      }
      ctx.body = flowBody(instance.id, stored);
    });

    router.get('/api/:id/flow', auth, async (ctx) => {
      const { instance } = ctx.state as InstanceState;
      const stored = await service.getFlow(instance.id);
      if (!stored) throw new GatewayError('NOT_FOUND', 'no flow is set for this instance');
      ctx.body = flowBody(instance.id, stored);
    });

    router.delete('/api/:id/flow', auth, async (ctx) => {
      const { instance } = ctx.state as InstanceState;
      const deleted = await service.clearFlow(instance.id);
      ctx.body = { success: true, instanceId: instance.id, deleted };
    });

    router.get('/api/:id/handovers', auth, async (ctx) => {
      const { instance } = ctx.state as InstanceState;
      const handovers = await service.listHandovers(instance.id);
      ctx.body = { success: true, instanceId: instance.id, handovers: handovers.map(handoverView) };
    });

    router.post('/api/:id/handover/release', auth, jsonBody, async (ctx) => {
      const { instance } = ctx.state as InstanceState;
      const phone = requiredPhone(bodyObject(ctx).phone);
      const released = await service.release(instance.id, phone);
      if (released.length === 0) throw new GatewayError('NOT_FOUND', `no open handover for ${phone}`);
      ctx.body = { success: true, instanceId: instance.id, phone, released: true };
    });
  };
}
