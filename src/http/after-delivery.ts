import type { Context } from 'koa';

/**
 * Runs `fn` once the answer was handed over in full (the response finished). A credential shown
 * once (a rotated key or secret) retires the one it replaces only then: a crash before that leaves
 * the old one working, so the holder is never left with none. A connection closed before the end
 * runs nothing: the new credential may not have arrived, and its first use retires the old one.
 */
export function afterDelivery(ctx: Context, fn: () => Promise<void>, onError: (err: unknown) => void): void {
  ctx.res.once('finish', () => {
    fn().catch(onError);
  });
}
