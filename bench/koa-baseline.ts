// The baseline: a bare Koa JSON handler on its own port, in its own process. It does what any JSON
// endpoint must (reads the body, parses it, answers JSON) and nothing else: no auth, no
// validation, no store, no log. The gateway's send is measured against it.
import Koa from 'koa';

const app = new Koa();
app.use(async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { phone?: string };
  ctx.body = { success: true, instanceId: 'baseline', messageId: 'X', to: body.phone ?? null, quotaRemaining: 'unlimited' };
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
