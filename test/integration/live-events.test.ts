import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';

// Contract part 2 "Live events": GET /api/{id}/events streams what the webhooks carry, from now
// on; bounded per instance; a client that leaves costs nothing.

async function readEvents(url: string, key: string, until: (events: Array<{ event: string; data: { type: string } }>) => boolean): Promise<Array<{ event: string; data: { type: string } }>> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { 'x-api-key': key }, signal: controller.signal });
  if (res.status !== 200) throw new Error(`events: ${res.status}`);
  const events: Array<{ event: string; data: { type: string } }> = [];
  const reader = res.body!.getReader();
  let text = '';
  const deadline = Date.now() + 5000;
  while (!until(events) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString('utf8');
    let sep: number;
    while ((sep = text.indexOf('\n\n')) !== -1) {
      const frame = text.slice(0, sep);
      text = text.slice(sep + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (event && data) events.push({ event, data: JSON.parse(data) });
    }
  }
  controller.abort();
  return events;
}

test('events stream what happens from now on: status, messages, message statuses', async (t) => {
  const d = await startTestDaemon({ config: { events: { maxClientsPerInstance: 2 } } });
  try {
    const inst = await d.createInstance({ sandbox: true, premiumDays: 30 });
    const url = `${d.url}/api/${inst.id}/events`;
    const got = readEvents(url, inst.key, (e) => e.some((x) => x.event === 'message.status'));
    await new Promise((r) => setTimeout(r, 100));
    await d.request('POST', `/api/${inst.id}/sandbox/scan`, { key: inst.key });
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15551234567', message: 'hi' } });
    await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: '+15551234567', message: 'hello' } });
    const events = await got;
    const types = events.map((e) => e.event);
    t.true(types.includes('instance.status'));
    t.true(types.includes('message.received'));
    t.true(types.includes('message.status'));
    t.true(events.every((e) => e.data.type === e.event));
    t.is((await fetch(url)).status, 401, 'the key is required');
  } finally {
    await d.close();
  }
});

test('clients per instance are bounded (429) and a client that leaves frees its place', async (t) => {
  const d = await startTestDaemon({ config: { events: { maxClientsPerInstance: 2 } } });
  try {
    const inst = await d.connectedSandbox();
    const url = `${d.url}/api/${inst.id}/events`;
    const a = new AbortController();
    const b = new AbortController();
    const ra = await fetch(url, { headers: { 'x-api-key': inst.key }, signal: a.signal });
    const rb = await fetch(url, { headers: { 'x-api-key': inst.key }, signal: b.signal });
    t.is(ra.status, 200);
    t.is(rb.status, 200);
    const third = await fetch(url, { headers: { 'x-api-key': inst.key } });
    t.is(third.status, 429);
    t.truthy(third.headers.get('retry-after'));
    a.abort();
    let ok = 0;
    for (let i = 0; i < 50 && ok !== 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const c = new AbortController();
      const r = await fetch(url, { headers: { 'x-api-key': inst.key }, signal: c.signal });
      ok = r.status;
      c.abort();
    }
    t.is(ok, 200);
    b.abort();
  } finally {
    await d.close();
  }
});
