import { PassThrough } from 'node:stream';
import Type from 'typebox';
import type { ConnectionManager } from '../connection/manager.js';
import type { Feature } from '../features/feature.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { Phone, closed } from '../schemas/common.js';
import { encodeLine } from './pair-protocol.js';
import { runPairSession } from './pair-session.js';

const PairInput = closed({ phone: Type.Optional(Phone) });

/** What pairing is built from. */
export interface PairingParts {
  instances: Pick<InstanceRepository, 'require'>;
  manager: Pick<ConnectionManager, 'open' | 'observe'>;
}

/** `gateway pair` through the daemon: follows (and drives) the pairing over the control socket. */
export function pairingFeature(parts: PairingParts): Feature {
  return { name: 'pairing', routes: pairingRoutes(parts) };
}

/** The pair route only the local CLI can call, over the control socket. */
function pairingRoutes(core: PairingParts): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/control/instances/:id/pair',
      auth: 'control',
      operationId: 'pair',
      summary: 'Follow (and drive) the pairing of an instance: NDJSON status, QR and code lines until connected',
      tags: ['control'],
      body: PairInput,
      response: { description: 'A stream of pair replies.', contentType: 'application/x-ndjson' },
      errors: ['NOT_FOUND', 'INVALID_FIELD'],
      async handle({ koa, params, body }) {
        // A control route: the caller is trusted, and `:id` is looked up here (404 when unknown).
        const instance = core.instances.require(params.id!);
        if (body.phone !== undefined && instance.sandbox) {
          throw new GatewayError('INVALID_FIELD', 'phone: pairing by code needs a WhatsApp instance; a sandbox instance pairs with POST /api/{id}/sandbox/scan');
        }
        const entry = await core.manager.open(instance);
        const stream = new PassThrough();
        const session = runPairSession(
          { connection: entry.connection, observe: (o) => core.manager.observe(instance.id, o) },
          body.phone,
          (reply) => {
            if (!stream.writableEnded) stream.write(encodeLine(reply));
            if (reply.type === 'error') stream.end();
          },
          () => stream.end(),
        );
        // The client hung up: stop following (the connection itself keeps running).
        koa.req.on('close', () => session.cancel());
        stream.on('close', () => session.cancel());
        koa.type = 'application/x-ndjson';
        koa.set('Cache-Control', 'no-store');
        koa.body = stream;
        return undefined;
      },
    }),
  ];
}
