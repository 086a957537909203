import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { runCli } from '../helpers/cli.js';
import { startChildDaemon, type ChildDaemon } from '../helpers/child-daemon.js';
import { request, tempDir, waitFor } from '../helpers/daemon.js';

const made: string[] = [];
test.after.always(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function initialised(): Promise<{ dir: string; secret: string }> {
  const root = await tempDir('gw-ops-logs-');
  made.push(root);
  const dir = join(root, 'data');
  const r = await runCli(['init', '--yes', '--json', '--allow-private-webhooks'], { dataDir: dir });
  if (r.code !== 0) throw new Error(r.stderr);
  return { dir, secret: (JSON.parse(r.stdout) as { serverSecret: string }).serverSecret };
}

type LogLine = Record<string, unknown>;
const lines = (d: ChildDaemon): LogLine[] =>
  d
    .stdout()
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);

/**
 * SIGTERM once the daemon logged "gateway listening": /healthz answers a moment before `start`
 * has installed its signal handlers, and a signal in that window ends the process unhandled.
 */
async function stop(d: ChildDaemon): Promise<number | string> {
  await waitFor(() => d.stdout().includes('"msg":"gateway listening"'), 10_000, 'gateway listening');
  d.kill('SIGTERM');
  return d.exited;
}

test('one JSON line per request with request id, instance id and status; no keys, secrets or bodies', async (t) => {
  const { dir, secret } = await initialised();
  const d = await startChildDaemon(dir);
  try {
    const webhookSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const created = await request(d.url, 'POST', '/api/instances/create', { secret, json: { sandbox: true, premiumDays: 30, webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret } });
    t.is(created.status, 201);
    const id = created.body.instanceId as string;
    const key = created.body.apiKey as string;
    await request(d.url, 'POST', `/api/${id}/sandbox/scan`, { key });
    const body = 'BODY-MARKER-7f3a the customer text';
    const sent = await request(d.url, 'POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: body }, headers: { 'x-request-id': 'req-from-client-1' } });
    t.is(sent.status, 200);
    t.is(sent.headers.get('x-request-id'), 'req-from-client-1');
    const denied = await request(d.url, 'GET', `/api/${id}/status`, { key: 'wrong-key' });
    t.is(denied.status, 401);

    const log = await waitFor(() => {
      const all = lines(d);
      return all.some((l) => l.requestId === 'req-from-client-1') && all.some((l) => l.status === 401) ? all : null;
    }, 3000, 'request log lines');
    const sendLine = log.find((l) => l.requestId === 'req-from-client-1');
    t.like(sendLine, { msg: 'request', method: 'POST', route: '/api/:id/send', instanceId: id, status: 200 });
    t.is(typeof sendLine?.ms, 'number');
    const deniedLine = log.find((l) => l.msg === 'request' && l.status === 401);
    t.regex(String(deniedLine?.requestId), /^[0-9a-f]{8}-[0-9a-z]+$/, 'a request id is generated when the client sends none');
    t.is(deniedLine?.instanceId, undefined, 'an unauthenticated request names no instance');

    const text = d.stdout();
    for (const s of [secret, key, webhookSecret, body, 'BODY-MARKER', 'wrong-key']) t.false(text.includes(s), `log contains ${s.slice(0, 12)}...`);
  } finally {
    t.is(await stop(d), 0);
  }
});

test('LOG_LEVEL=warn silences request lines; --log-level wins over LOG_LEVEL', async (t) => {
  const { dir } = await initialised();
  const quiet = await startChildDaemon(dir, [], { LOG_LEVEL: 'warn' });
  await request(quiet.url, 'GET', '/api/instances/create');
  await request(quiet.url, 'GET', '/healthz');
  // At warn there is no "listening" line to wait for; only the log content matters here.
  await new Promise((r) => setTimeout(r, 200));
  quiet.kill('SIGTERM');
  await quiet.exited;
  t.false(lines(quiet).some((l) => l.msg === 'request'));
  t.false(quiet.stdout().includes('gateway listening'));

  const loud = await startChildDaemon(dir, ['--log-level', 'info'], { LOG_LEVEL: 'warn' });
  await request(loud.url, 'GET', '/api/nope');
  t.is(await stop(loud), 0);
  t.true(lines(loud).some((l) => l.msg === 'request' && l.status === 404));
});

test('the production daemon serves /metrics to loopback and /openapi.json; SIGTERM exits 0 well inside TimeoutStopSec', async (t) => {
  const { dir, secret } = await initialised();
  const d = await startChildDaemon(dir);
  let exited = false;
  try {
    const created = await request(d.url, 'POST', '/api/instances/create', { secret, json: { sandbox: true, premiumDays: 30 } });
    const id = created.body.instanceId as string;
    const key = created.body.apiKey as string;
    await request(d.url, 'POST', `/api/${id}/sandbox/scan`, { key });
    t.is((await request(d.url, 'POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'hi' } })).status, 200);

    const metrics = await request(d.url, 'GET', '/metrics');
    t.is(metrics.status, 200);
    t.regex(metrics.body as string, /^gateway_sends_total\{result="sent",code=""\} 1$/m);
    t.regex(metrics.body as string, /^gateway_connections\{status="connected"\} 1$/m);
    t.regex(metrics.body as string, /^nodejs_eventloop_lag_p99_seconds /m);
    const docs = await request(d.url, 'GET', '/openapi.json');
    t.is(docs.status, 200);
    t.is(docs.body.openapi, '3.1.0');

    const started = Date.now();
    const code = await stop(d);
    exited = true;
    t.is(code, 0);
    t.true(Date.now() - started < 15_000, 'shutdown fits the unit TimeoutStopSec=30s');
  } finally {
    if (!exited) await stop(d);
  }
});
