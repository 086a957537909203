import { Stream } from 'node:stream';
import type { Context } from 'koa';

/**
 * Sets a handler's result as the response body; a plain object or array goes as its JSON text,
 * which is what Koa would send for it. WHY: Koa 3 recognises an object body only after testing
 * `instanceof ReadableStream`, `Blob` and `Response`, and the first touch of the `Response` global
 * loads Node's fetch (undici): ~21 ms of every CLI command that runs its request through a daemon
 * built offline (`gateway instance create` on the bench's 10,000-instance store, CPU profile).
 */
export function setBody(ctx: Context, value: unknown): void {
  if (isPlainJson(value)) {
    if (!/\bjson\b/i.test(ctx.type)) ctx.type = 'json';
    ctx.body = JSON.stringify(value);
    return;
  }
  ctx.body = value;
}

function isPlainJson(value: unknown): value is object {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || value instanceof Stream) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === Array.prototype || proto === null;
}
