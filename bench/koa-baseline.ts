// The baseline: a bare Koa JSON handler doing no work, on its own port, in its own process.
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { success: true, instanceId: 'baseline', messageId: 'X', quotaRemaining: 'unlimited' };
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
