/**
 * Guards issue 13 repair 3 (one error): every failure reaches HTTP through one table. A
 * GatewayError answers its table status with its code; a 5xx not written for clients
 * (INTERNAL, a stray Error with a stack) answers a generic 500 and never leaks its
 * detail; 429s carry Retry-After; CLI exit codes come from the same table.
 */
import test from 'ava';
import Koa from 'koa';
import { pino } from 'pino';
import { ERROR_TABLE, GatewayError, storageError } from '../../src/domain/errors.js';
import { ControlRequests } from '../../src/http/control-requests.js';
import { errorMiddleware } from '../../src/http/error-middleware.js';
import { corruptStore } from '../../src/storage/files/json-file.js';

async function answer(thrown: unknown, options: { control?: boolean } = {}): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  const app = new Koa();
  app.silent = true;
  const control = new ControlRequests();
  if (options.control) {
    // As the daemon's control socket does (src/daemon/boot.ts): its requests are trusted.
    app.use(async (ctx, next) => {
      control.trust(ctx.req);
      await next();
    });
  }
  app.use(errorMiddleware(pino({ level: 'silent' }), control));
  app.use(() => {
    throw thrown;
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
    return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
  } finally {
    server.close();
  }
}

test('a GatewayError answers its table status and code with its message', async (t) => {
  t.deepEqual((await answer(new GatewayError('NOT_FOUND', 'no instance with id "inst_x"'))).body, { success: false, error: { code: 'NOT_FOUND', message: 'no instance with id "inst_x"' } });
  t.is((await answer(new GatewayError('INVALID_FIELD', 'credits: too many'))).status, 400);
  const limited = await answer(new GatewayError('RATE_LIMITED', 'slow down', { retryAfter: 7 }));
  t.is(limited.status, 429);
  t.is(limited.retryAfter, '7');
  const storage = await answer(storageError(Object.assign(new Error('no space'), { code: 'ENOSPC' }), 'credits'));
  t.like(storage, { status: 503, body: { error: { code: 'STORAGE_UNAVAILABLE' } } });
});

test('5xx not written for clients never leak their detail', async (t) => {
  // Corrupt stored data says so (issue 21 item 9), but never which file: that is for the log.
  const corrupt = await answer(corruptStore('/data/credits/inst_x.json', 'Unexpected end'));
  t.deepEqual(corrupt.body, { success: false, error: { code: 'STORE_CORRUPT', message: 'stored data is corrupt and was left untouched; the daemon log names the file' } });
  t.is(corrupt.status, 500);
  const bug = await answer(new Error('boom\n    at secret/path.js:1'));
  t.deepEqual(bug, { status: 500, body: { success: false, error: { code: 'INTERNAL', message: 'internal error' } }, retryAfter: null });
});

test('one table gives every code its HTTP status and exit code', (t) => {
  for (const [code, row] of Object.entries(ERROR_TABLE)) {
    const err = new GatewayError(code as keyof typeof ERROR_TABLE, 'x');
    t.is(err.status, row.status);
    t.is(err.exitCode, row.exit);
    if (row.status < 500) t.true(row.expose, `${code}: every 4xx is shown to the client`);
  }
  t.is(new GatewayError('NOT_FOUND', 'x').exitCode, 4);
  t.is(new GatewayError('STORE_CORRUPT', 'x').exitCode, 3);
  t.is(new GatewayError('USAGE', 'x').exitCode, 2);
});

test('on the control socket (our own CLI) a 5xx keeps its code and message, so the CLI exits with its code', async (t) => {
  const corrupt = await answer(corruptStore('/data/credits/inst_x.json', 'Unexpected end'), { control: true });
  t.is(corrupt.status, 500);
  t.like(corrupt.body, { error: { code: 'STORE_CORRUPT' } });
  t.regex((corrupt.body as { error: { message: string } }).error.message, /inst_x\.json: store file is corrupt/);
  // A stray Error stays generic everywhere.
  t.like((await answer(new Error('boom'), { control: true })).body, { error: { code: 'INTERNAL', message: 'internal error' } });
});
