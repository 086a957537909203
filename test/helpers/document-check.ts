import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ApiResponse, TestDaemon } from './daemon.js';

type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Json }> }> }>>;
  components: Json;
}

/**
 * Checks real answers against the served /openapi.json (ajv, JSON Schema 2020-12): returns a
 * function that says why an answer does not match the documented schema of its route and status,
 * or null when it does.
 */
export async function documentChecker(d: TestDaemon): Promise<(res: ApiResponse, path: string, method: string) => string | null> {
  const doc = (await d.request('GET', '/openapi.json')).body as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: doc.components } as Json);
  const cache = new Map<string, ValidateFunction>();
  return (res, path, method) => {
    const response = doc.paths[path]?.[method.toLowerCase()]?.responses[String(res.status)];
    const schema = response?.content?.['application/json']?.schema;
    if (!schema) return `${method} ${path} documents no JSON answer for ${res.status}`;
    const key = `${method} ${path} ${res.status}`;
    let v = cache.get(key);
    if (!v) {
      v = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"openapi#/components/')) as Json);
      cache.set(key, v);
    }
    return v(res.body) ? null : `${key}: ${JSON.stringify(v.errors)} in ${JSON.stringify(res.body).slice(0, 300)}`;
  };
}
