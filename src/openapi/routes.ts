import Type from 'typebox';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Feature } from '../features/feature.js';
import { openApiDocument, servedTo } from './document.js';

/** `GET /openapi.json` and `GET /healthz`, without auth; the document lists every route of the daemon. */
export function operationsFeature(parts: { allRoutes: () => readonly RouteDef[]; health: () => { node: string | null; storage: string } }): Feature {
  return { name: 'operations', routes: operationsRoutes(parts.allRoutes, parts.health) };
}

function operationsRoutes(allRoutes: () => readonly RouteDef[], health: () => { node: string | null; storage: string }): RouteDef[] {
  let doc: Record<string, unknown> | null = null;
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      auth: 'public',
      operationId: 'health',
      summary: 'Liveness: 200 while the daemon serves',
      tags: ['operations'],
      response: {
        description: 'Serving.',
        schema: Type.Object(
          {
            ok: Type.Literal(true),
            node: Type.Union([Type.String(), Type.Null()], { description: 'This node (several hosts); null on one host.' }),
            storage: Type.String({ description: 'The storage engine: files or postgres.' }),
          },
          { additionalProperties: false },
        ),
        example: { ok: true, node: null, storage: 'files' },
      },
      handle: () => ({ ok: true as const, ...health() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      auth: 'public',
      operationId: 'openapi',
      summary: 'This OpenAPI 3.1 document',
      tags: ['operations'],
      response: { description: 'The document.', schema: Type.Object({ openapi: Type.String() }) },
      handle({ koa }) {
        doc ??= openApiDocument(allRoutes());
        koa.set('Cache-Control', 'no-cache');
        return servedTo(doc, koa.protocol, koa.get('host'));
      },
    }),
  ];
}
