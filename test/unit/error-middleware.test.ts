import test from 'ava';
import Koa from 'koa';
import { pino } from 'pino';
import { errorMiddleware } from '../../src/daemon/error-middleware.js';
import { UserError } from '../../src/domain/errors.js';
import { CorruptStoreError } from '../../src/store/json-file.js';

async function answer(thrown: unknown): Promise<{ status: number; body: unknown }> {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware(pino({ level: 'silent' })));
  app.use(() => {
    throw thrown;
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
    return { status: res.status, body: await res.json() };
  } finally {
    server.close();
  }
}

test('store errors shared with the CLI map to the contract, never leaking detail on a 500', async (t) => {
  t.like(await answer(new UserError('no instance with id "inst_x"', 4)), { status: 401, body: { error: { code: 'UNAUTHORIZED' } } });
  t.like(await answer(new UserError('credits: a balance above 1000000000000 is not supported', 2)), { status: 400, body: { error: { code: 'INVALID_FIELD' } } });
  const corrupt = await answer(new CorruptStoreError('/data/credits/inst_x.json', 'Unexpected end'));
  t.deepEqual(corrupt, { status: 500, body: { success: false, error: { code: 'INTERNAL', message: 'internal error' } } });
  t.like(await answer(new Error('boom\n    at x')), { status: 500, body: { error: { message: 'internal error' } } });
});
