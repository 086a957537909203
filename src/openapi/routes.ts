import Type from 'typebox';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Feature } from '../features/feature.js';
import { openApiDocument, servedTo } from './document.js';

/** `GET /openapi.json` and `GET /healthz`, without auth; the document lists every route of the daemon. */
export function operationsFeature(parts: { allRoutes: () => readonly RouteDef[] }): Feature {
  return { name: 'operations', routes: operationsRoutes(parts.allRoutes) };
}

function operationsRoutes(allRoutes: () => readonly RouteDef[]): RouteDef[] {
  let doc: Record<string, unknown> | null = null;
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      auth: 'public',
      operationId: 'health',
      summary: 'Liveness: 200 while the daemon serves',
      tags: ['operations'],
      response: { description: 'Serving.', schema: Type.Object({ ok: Type.Literal(true) }, { additionalProperties: false }), example: { ok: true } },
      handle: () => ({ ok: true }),
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
