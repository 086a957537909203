import { open, type FileHandle } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import test from 'ava';
import { request, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/** The value of one sample in Prometheus text, matched by name and exact label set. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[l[1] ?? ''] = l[2] ?? '';
    const want = Object.entries(labels);
    if (want.length === Object.keys(found).length && want.every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function scrape(d: TestDaemon): Promise<string> {
  const res = await d.request('GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  return res.body as string;
}

test('counts sends by result and code, credits spent, requests by route template', async (t) => {
  const d = await startTestDaemon({ config: { metrics: { mode: 'local' } } });
  try {
    // The owner's first instance has the trial (premium, no credits spent); the second pays.
    const premium = await d.connectedSandbox({ owner: 'acme' });
    const paying = await d.connectedSandbox({ owner: 'acme', credits: 2 });
    const send = (inst: { id: string; key: string }) => d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: '+15551234567', message: 'hi' } });
    t.is((await send(premium)).status, 200);
    t.is((await send(paying)).status, 200);
    t.is((await send(paying)).status, 200);
    t.is((await send(paying)).status, 403); // QUOTA_EXHAUSTED
    await d.request('POST', `/api/${premium.id}/sandbox/disconnect`, { key: premium.key });
    t.is((await send(premium)).status, 503); // CONNECTION_NOT_READY

    const res = await d.request('GET', '/metrics');
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = res.body as string;
    t.is(sample(text, 'gateway_sends_total', { result: 'sent', code: '' }), 3);
    t.is(sample(text, 'gateway_sends_total', { result: 'refused', code: 'QUOTA_EXHAUSTED' }), 1);
    t.is(sample(text, 'gateway_sends_total', { result: 'failed', code: 'CONNECTION_NOT_READY' }), 1);
    t.is(sample(text, 'gateway_credits_spent_total'), 2);
    t.is(sample(text, 'gateway_http_requests_total', { method: 'POST', route: '/api/:id/send', status: '200' }), 3);
    t.is(sample(text, 'gateway_http_requests_total', { method: 'POST', route: '/api/instances/create', status: '201' }), 2);
    t.is(sample(text, 'gateway_http_request_duration_seconds_count', { method: 'POST', route: '/api/:id/send' }), 5);
    t.is(sample(text, 'gateway_connections', { status: 'connected' }), 1);
    t.is(sample(text, 'gateway_connections', { status: 'disconnected' }), 1);
    t.is(sample(text, 'gateway_connections', { status: 'initializing' }), 0);
    // Low cardinality: instance ids never become label values.
    t.false(text.includes(premium.id));
    t.false(text.includes(paying.id));
  } finally {
    await d.close();
  }
});

test('webhook deliveries and outbox depth come from the parts that own them', async (t) => {
  const d = await startTestDaemon();
  try {
    t.is(sample(await scrape(d), 'gateway_webhook_deliveries_total', { result: 'failed' }), 0);
    const { metrics } = d.core;
    metrics.webhookDelivery('delivered');
    metrics.webhookDelivery('delivered');
    metrics.webhookDelivery('retry');
    // The outbox depth gauge reads the webhook feature: an event for a receiver that refuses
    // connections stays pending.
    const inst = await d.connectedSandbox({ webhookUrl: 'http://127.0.0.1:9/hook' });
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15551234567', message: 'pending' } });
    const text = await scrape(d);
    t.is(sample(text, 'gateway_webhook_deliveries_total', { result: 'delivered' }), 2);
    // ours, plus the real retries of the refused deliveries
    t.true((sample(text, 'gateway_webhook_deliveries_total', { result: 'retry' }) ?? 0) >= 1);
    t.is(sample(text, 'gateway_webhook_deliveries_total', { result: 'failed' }), 0);
    t.is(sample(text, 'gateway_outbox_depth'), d.webhooks.pendingCount());
    t.true(d.webhooks.pendingCount() >= 1);
  } finally {
    await d.close();
  }
});

test('process metrics include event-loop lag', async (t) => {
  const d = await startTestDaemon({ defaultMetrics: true });
  try {
    const text = await scrape(d);
    t.not(sample(text, 'nodejs_eventloop_lag_p99_seconds'), undefined);
    t.not(sample(text, 'nodejs_eventloop_lag_seconds'), undefined);
    t.not(sample(text, 'process_resident_memory_bytes'), undefined);
  } finally {
    await d.close();
  }
});

// Rule (issue "Performance, round 2", item 3): a scrape of a daemon holding thousands of sockets
// does not stall the event loop: open descriptors are counted off the loop, and the collectors
// that list every handle twice per scrape are left out (nodejs_active_resources says the same).
// Serial: the count is the whole process's, and the other tests here open and close daemons.
test.serial('process_open_fds counts what the process holds; nodejs_active_handles and _requests are left out for nodejs_active_resources', async (t) => {
  const d = await startTestDaemon({ defaultMetrics: true });
  const files: FileHandle[] = [];
  try {
    const before = sample(await scrape(d), 'process_open_fds');
    t.true(before !== undefined && before > 3, `process_open_fds ${before}`);
    for (let i = 0; i < 25; i++) files.push(await open(process.execPath, 'r'));
    const text = await scrape(d);
    const after = sample(text, 'process_open_fds')!;
    // Within a few: the process's own descriptors come and go (Node 24 closed one between the scrapes).
    t.true(after - before! >= 20 && after - before! <= 40, `process_open_fds ${before} then ${after} with 25 more files open`);
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total']) t.false(text.includes(`\n${name} `), `${name} is listed`);
    t.false(/^nodejs_active_handles\{/m.test(text));
    t.true(sample(text, 'nodejs_active_resources_total')! > 0);
  } finally {
    for (const f of files) await f.close();
    await d.close();
  }
});

test('two daemons in one process keep separate counters', async (t) => {
  const a = await startTestDaemon({ defaultMetrics: true });
  const b = await startTestDaemon({ defaultMetrics: true });
  try {
    await a.request('GET', '/healthz');
    await a.request('GET', '/healthz');
    t.is(sample(await scrape(a), 'gateway_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }), 2);
    t.is(sample(await scrape(b), 'gateway_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }), undefined);
  } finally {
    await a.close();
    await b.close();
  }
});

test('metrics.mode "off" answers 404 NOT_FOUND like an unknown route', async (t) => {
  const d = await startTestDaemon({ defaultMetrics: true, config: { metrics: { mode: 'off' } } });
  try {
    const res = await d.request('GET', '/metrics');
    t.is(res.status, 404);
    const unknown = await d.request('GET', '/metricz');
    t.deepEqual(res.body, { ...unknown.body, error: { ...unknown.body.error, message: 'no route for GET /metrics' } });
  } finally {
    await d.close();
  }
});

test('metrics.mode "public" serves any client', async (t) => {
  const d = await startTestDaemon({ defaultMetrics: true, config: { metrics: { mode: 'public' } } });
  try {
    const res = await d.request('GET', '/metrics');
    t.is(res.status, 200);
    t.true((res.body as string).includes('gateway_sends_total'));
  } finally {
    await d.close();
  }
});

/** An address of this host that is not loopback, so a request to it comes from a non-loopback peer. */
function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) if (info.family === 'IPv4' && !info.internal) return info.address;
  }
  return undefined;
}

for (const [mode, expected] of [['local', 404], ['public', 200]] as const) {
  test(`metrics.mode "${mode}" from a non-loopback client address answers ${expected}`, async (t) => {
    const address = externalIPv4();
    if (address === undefined) {
      // CI's machines have one (eth0): there a missing interface is a failure, never a silent pass.
      if (process.env.CI === 'true') t.fail('no non-loopback IPv4 interface in CI: this test must run there');
      else t.pass('no non-loopback interface on this host; covered by the guard unit test');
      return;
    }
    const d = await startTestDaemon({ defaultMetrics: true, config: { host: '0.0.0.0', metrics: { mode } } });
    try {
      const local = await d.request('GET', '/metrics');
      t.is(local.status, 200);
      const remote = await request(`http://${address}:${d.daemon.port}`, 'GET', '/metrics');
      t.is(remote.status, expected);
      if (expected === 404) t.is(remote.body.error.code, 'NOT_FOUND');
    } finally {
      await d.close();
    }
  });
}
