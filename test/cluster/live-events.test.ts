/**
 * Guards issue 23 item 4 ("any node answers") for streams: live events (SSE) opened on a node that
 * does not run the instance come from its owner as they happen (the forwarding passes the stream
 * on unbuffered), and a wrong key is 401 there too. Two built daemons (bin/gateway; build first) on
 * one fresh PostgreSQL database; a sandbox instance.
 */
import test from 'ava';
import { startGatewayCluster } from '../helpers/cluster.js';

test('live events opened on the node that does not run the instance stream what its owner does, as it happens', async (t) => {
  t.timeout(60_000);
  const cluster = await startGatewayCluster({ nodes: 2 });
  t.teardown(() => cluster.close());
  const { id, key, other } = await cluster.sandboxWithOwner(5);
  const url = `${cluster.nodes[other]!.url}/api/${id}/events`;
  t.is((await fetch(url, { headers: { 'x-api-key': 'gw_live_wrong' } })).status, 401);

  const controller = new AbortController();
  t.teardown(() => controller.abort());
  const res = await fetch(url, { headers: { 'x-api-key': key }, signal: controller.signal });
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  let text = '';
  const next = async (type: string): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const frames = text.split('\n\n');
      for (const [k, frame] of frames.slice(0, -1).entries()) {
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (/^event: (.*)$/m.exec(frame)?.[1] === type && data) {
          text = frames.slice(k + 1).join('\n\n');
          return JSON.parse(data) as Record<string, unknown>;
        }
      }
      if (Date.now() > deadline) throw new Error(`no ${type} event within 10 s`);
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      text += Buffer.from(value).toString('utf8');
    }
  };

  // Each event arrives before the next thing is done: streamed, not buffered until the end.
  const inbound = await cluster.request(other, 'POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15551234567', message: 'first' } });
  t.is(inbound.status, 200, JSON.stringify(inbound.body));
  t.like(await next('message.received'), { type: 'message.received', instanceId: id });
  const sent = await cluster.request(other, 'POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'second' } });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  t.like(await next('message.status'), { type: 'message.status', instanceId: id });
});
