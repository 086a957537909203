import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';
import { inbound, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

test('PUT /webhook with a loopback URL is refused naming webhooks.allowPrivateTargets', async (t) => {
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: false } } });
  try {
    const inst = await d.connectedSandbox();
    for (const url of ['http://127.0.0.1:9/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/x', 'http://localhost:8080/']) {
      const res = await d.request('PUT', `/api/${inst.id}/webhook`, { key: inst.key, json: { url } });
      t.is(res.status, 400, url);
      t.is(res.body.error.code, 'INVALID_FIELD', url);
      t.regex(res.body.error.message, /webhooks\.allowPrivateTargets/, url);
    }
  } finally {
    await d.close();
  }
});

test('the policy is checked again at delivery time: a target that turned private is not called', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon({
    config: { webhooks: { allowPrivateTargets: false, retryDelaysMs: [] } },
  });
  try {
    const inst = await d.connectedSandbox();
    // As if the name resolved publicly when it was set and to loopback now: write it past the API check.
    await d.core.instances.modify(inst.id, (r) => void (r.webhook = { url: receiver.url, secret: null, events: null }));
    await inbound(d, inst, '+15551234567', 'to a private address?');
    const records = await waitForOutbox(d.dataDir, inst.id, (r) => r.some((x) => x.type === 'message.received' && x.status === 'failed'));
    const failed = records.find((x) => x.type === 'message.received')!;
    t.regex(failed.lastError ?? '', /refused by the webhook target policy: .*loopback\/private.*webhooks\.allowPrivateTargets/);
    t.is(receiver.requests.length, 0);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('a host name is resolved through the injected resolver and refused when it resolves privately', async (t) => {
  const receiver = await startReceiver();
  const resolver = async (host: string) => (host === 'hooks.example.test' ? ['127.0.0.1'] : []);
  const allowed = await startTestDaemon({ webhooks: { resolver } });
  const refused = await startTestDaemon({ webhooks: { resolver }, config: { webhooks: { allowPrivateTargets: false, retryDelaysMs: [] } } });
  try {
    const url = `http://hooks.example.test:${receiver.port}/hook`;
    const a = await allowed.connectedSandbox();
    await setWebhook(allowed, a, url);
    await inbound(allowed, a, '+15551234567', 'via name');
    const [req] = await receiver.waitForCount(1);
    t.is(req!.json.data.text, 'via name');
    t.is(req!.headers.host, `hooks.example.test:${receiver.port}`);

    const b = await refused.connectedSandbox();
    await refused.core.instances.modify(b.id, (r) => void (r.webhook = { url, secret: null, events: ['message.received'] }));
    await inbound(refused, b, '+15551234567', 'refused');
    const [r] = await waitForOutbox(refused.dataDir, b.id, (x) => x[0]?.status === 'failed');
    t.regex(r!.lastError ?? '', /hooks\.example\.test resolves to a loopback\/private address \(127\.0\.0\.1\)/);
    t.is(receiver.requests.length, 1);
  } finally {
    await allowed.close();
    await refused.close();
    await receiver.close();
  }
});

test('DNS rebinding between the check and the connect is refused by the connection itself', async (t) => {
  const receiver = await startReceiver();
  let calls = 0;
  // Public for the policy check, loopback for the connect.
  const resolver = async () => (++calls === 1 ? ['93.184.216.34'] : ['127.0.0.1']);
  const d = await startTestDaemon({ webhooks: { resolver }, config: { webhooks: { allowPrivateTargets: false, retryDelaysMs: [] } } });
  try {
    const inst = await d.connectedSandbox();
    await d.core.instances.modify(inst.id, (r) => void (r.webhook = { url: `http://rebind.example.test:${receiver.port}/hook`, secret: null, events: ['message.received'] }));
    await inbound(d, inst, '+15551234567', 'rebind');
    const [r] = await waitForOutbox(d.dataDir, inst.id, (x) => x[0]?.status === 'failed');
    t.true(calls >= 2);
    t.regex(r!.lastError ?? '', /rebind\.example\.test resolves to a loopback\/private address \(127\.0\.0\.1\).*webhooks\.allowPrivateTargets/);
    t.is(receiver.requests.length, 0);
  } finally {
    await d.close();
    await receiver.close();
  }
});
