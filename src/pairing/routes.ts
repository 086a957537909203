import { PassThrough } from 'node:stream';
import Type from 'typebox';
import type { Core } from '../core/core.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { Phone, closed } from '../schemas/common.js';
import { encodeLine } from './pair-protocol.js';
import { runPairSession } from './pair-session.js';

const PairInput = closed({ phone: Type.Optional(Phone) });

/**
 * Routes only the local CLI can call, over the control socket: what has no public REST
 * counterpart. Everything else the CLI does goes through the public routes.
 */
export function controlRoutes(core: Core): RouteDef[] {
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
      async handle() {
        return { serverSecret: await core.serverSecret.rotate() };
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
