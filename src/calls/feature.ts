import type { Logger } from 'pino';
import type { Feature } from '../features/feature.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { RejectCallBody } from '../schemas/calls.js';
import { autoRejectConsumer, type AutoRejectSetting, type CallRejectParts } from './reject.js';

export { rejectCall, autoRejectConsumer, type AutoRejectSetting } from './reject.js';

/** What the calls feature is built from. */
export interface CallsParts extends CallRejectParts {
  logger: Logger;
  /** `calls.autoReject` of each instance (the instance settings); absent: calls are never rejected by themselves. */
  autoReject?: AutoRejectSetting;
}

function callRoutes(parts: CallsParts): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/:id/calls/:callId/reject',
      auth: 'instance',
      operationId: 'rejectCall',
      summary: 'Reject an incoming call (the callId of its call.received event); free',
      description: '404 NOT_FOUND for a call that is over or was never offered.',
      tags: ['calls'],
      response: { description: 'Rejected.', schema: RejectCallBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', callId: 'C0A1B2C3D4E5F60718293A4B5C6D7E8F', rejected: true } },
      errors: ['NOT_FOUND', 'CONNECTION_NOT_READY'],
      async handle({ instance, params }) {
        const callId = params.callId!;
        if (!/^[A-Za-z0-9_-]{1,128}$/.test(callId)) throw new GatewayError('NOT_FOUND', 'no such call');
        const rejected = await parts.sender.act(instance.id, (c) => c.rejectCall(callId), { paced: false });
        if (!rejected) throw new GatewayError('NOT_FOUND', 'no such call (it is over, or was never offered to this instance)');
        return { success: true, instanceId: instance.id, callId, rejected: true };
      },
    }),
  ];
}

/** Incoming calls: reject one; with `autoReject`, every call of the instances whose setting says so. */
export function callsFeature(parts: CallsParts): Feature {
  return {
    name: 'calls',
    routes: callRoutes(parts),
    ...(parts.autoReject ? { consumers: [{ consumer: autoRejectConsumer({ ...parts, setting: parts.autoReject }) }] } : {}),
  };
}
