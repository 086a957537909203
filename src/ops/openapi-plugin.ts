import type Router from '@koa/router';
import type { DaemonPlugin } from '../daemon/boot.js';
import { openApiDocument, servedDocument, toOpenApiPath, type OpenApiDocument } from './openapi/index.js';

/** "METHOD /openapi/path" for every route on the router (HEAD only where it is not GET's twin). */
export function registeredRoutes(router: Router): Set<string> {
  const out = new Set<string>();
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string') continue;
    for (const method of layer.methods) {
      if (method === 'HEAD' && layer.methods.includes('GET')) continue;
      out.add(`${method} ${toOpenApiPath(layer.path)}`);
    }
  }
  return out;
}

/** `GET /openapi.json`, without auth: the OpenAPI 3.1 document of the routes this daemon serves. */
export function createDocsPlugin(): DaemonPlugin {
  return {
    name: 'docs',
    setup(_deps, { appOptions }) {
      appOptions.extensions ??= [];
      appOptions.extensions.push((router) => {
        let served: OpenApiDocument | null = null;
        router.get('/openapi.json', (ctx) => {
          // Built on first use: by then every part has registered its routes.
          served ??= servedDocument(openApiDocument(), registeredRoutes(router));
          ctx.set('Cache-Control', 'no-cache');
          ctx.body = served;
        });
      });
    },
  };
}
