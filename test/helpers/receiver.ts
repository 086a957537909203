import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestDaemon, type TestDaemon, type TestDaemonOptions } from './daemon.js';
import type { WebhookEventType } from '../../src/domain/types.js';
import { outboxPaths, readInstanceDeliveries } from '../../src/storage/files/outbox/files.js';
import type { DeliveryRecord } from '../../src/webhooks/delivery-record.js';

/** A status to answer, `'hang'` (never answer), or a full answer. */
export type Reply = number | 'hang' | { status: number; body?: string; headers?: Record<string, string> };

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The parsed body (webhook payloads are JSON). */
  json: { type: string; timestamp: string; instanceId: string; data: Record<string, unknown> };
  receivedAt: number;
}

export interface Receiver {
  url: string;
  port: number;
  /** Every request so far, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Replies used in order for the next requests; when they run out, the default applies. */
  script(...replies: Reply[]): void;
  setDefault(reply: Reply | ((req: ReceivedRequest) => Reply)): void;
  /** Most requests open at the same time so far. */
  readonly maxConcurrent: number;
  /** Resolves once at least `n` requests arrived. */
  waitForCount(n: number, ms?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A real HTTP receiver on port 0 (or `port`) that answers scripted statuses; always close() it. */
export async function startReceiver(options: { port?: number; reply?: Reply } = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const scripted: Reply[] = [];
  let fallback: Reply | ((req: ReceivedRequest) => Reply) = options.reply ?? 200;
  let open = 0;
  let maxConcurrent = 0;
  const server: Server = createServer((req, res) => {
    open += 1;
    maxConcurrent = Math.max(maxConcurrent, open);
    res.on('close', () => (open -= 1));
    void readBody(req).then((body) => {
      let json: ReceivedRequest['json'];
      try {
        json = JSON.parse(body) as ReceivedRequest['json'];
      } catch {
        json = { type: '', timestamp: '', instanceId: '', data: {} };
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers, body, json, receivedAt: Date.now() };
      requests.push(received);
      const reply = scripted.length > 0 ? scripted.shift()! : typeof fallback === 'function' ? fallback(received) : fallback;
      if (reply === 'hang') return;
      const answer = typeof reply === 'number' ? { status: reply } : reply;
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? `status ${answer.status}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    script: (...replies) => void scripted.push(...replies),
    setDefault: (reply) => void (fallback = reply),
    get maxConcurrent() {
      return maxConcurrent;
    },
    waitForCount: async (n, ms = 5000) => {
      const until = Date.now() + ms;
      while (requests.length < n) {
        if (Date.now() > until) throw new Error(`receiver got ${requests.length} requests, expected ${n}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Points an instance's webhook at `url` through the API (events default: message.received only). */
export async function setWebhook(
  d: TestDaemon,
  inst: { id: string; key: string },
  url: string,
  options: { secret?: string; events?: WebhookEventType[] | null } = {},
): Promise<void> {
  const events = options.events === undefined ? ['message.received'] : options.events;
  const res = await d.request('PUT', `/api/${inst.id}/webhook`, {
    key: inst.key,
    json: { url, ...(options.secret ? { secret: options.secret } : {}), ...(events ? { events } : {}) },
  });
  if (res.status !== 200) throw new Error(`webhook set failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** A message arriving at the sandbox instance; resolves with its messageId once the API answered. */
export async function inbound(d: TestDaemon, inst: { id: string; key: string }, from: string, message: string): Promise<string> {
  const res = await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from, message } });
  if (res.status !== 200) throw new Error(`inbound failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.messageId as string;
}

/** The instance's deliveries as stored on disk, in queue order. */
export function outbox(dataDir: string, instanceId: string): Promise<DeliveryRecord[]> {
  return readInstanceDeliveries(outboxPaths(dataDir), instanceId);
}

/** Polls the on-disk outbox until `check` accepts it. */
export async function waitForOutbox(
  dataDir: string,
  instanceId: string,
  check: (records: DeliveryRecord[]) => boolean,
  ms = 5000,
): Promise<DeliveryRecord[]> {
  const until = Date.now() + ms;
  for (;;) {
    const records = await outbox(dataDir, instanceId);
    if (check(records)) return records;
    if (Date.now() > until) throw new Error(`outbox never matched; last: ${JSON.stringify(records.map((r) => ({ id: r.id, status: r.status, attempts: r.attempts, lastError: r.lastError })))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The usual webhook test set-up: a receiver and a daemon with the webhook part, both closed in
 * `finally` whatever the test does.
 */
export async function withWebhookDaemon(
  fn: (d: TestDaemon, receiver: Receiver) => Promise<void>,
  options: TestDaemonOptions = {},
): Promise<void> {
  const receiver = await startReceiver();
  const d = await startTestDaemon(options);
  try {
    await fn(d, receiver);
  } finally {
    await d.close();
    await receiver.close();
  }
}
