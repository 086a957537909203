// Records a real answer of every JSON operation of /openapi.json as its example, from a scripted
// walk through a sandbox instance on an in-process daemon, into src/openapi/recorded-examples.ts.
// Examples written by hand in a route definition win; these fill the rest, and are real answers
// of the current code (test/integration/openapi.test.ts validates every example against its
// schema, so a schema change that outdates one fails there: run this again).
//
//   node --import=tsx scripts/record-openapi-examples.ts
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { startTestDaemon, waitFor, type ApiResponse } from '../test/helpers/daemon.js';

const recorded = new Map<string, unknown>();
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end());
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [100] } } });
const PHONE = '+15551234567';
const CHAT = '15551234567@s.whatsapp.net';
const GROUP = '120363041234567890@g.us';

/** Calls a route and keeps its answer under the document's key (method and templated path). */
async function call(method: string, path: string, template: string, options: { key?: string; secret?: string; json?: unknown; body?: FormData } = {}): Promise<ApiResponse> {
  const res = await d.request(method, path, options);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  recorded.set(`${method} ${template}`, res.body);
  return res;
}

const admin = { secret: d.secret };
const created = await d.request('POST', '/api/instances/create', { ...admin, json: { name: 'shop', owner: 'acme', sandbox: true, credits: 100 } });
const id = created.body.instanceId as string;
let key = { key: created.body.apiKey as string };
const i = (p: string) => `/api/${id}${p}`;

// Admin routes.
await call('GET', '/api/instances?owner=acme&limit=10', '/api/instances', admin);
await call('POST', `/api/instances/${id}/credits`, '/api/instances/{id}/credits', { ...admin, json: { add: 50 } });
await call('POST', `/api/instances/${id}/premium`, '/api/instances/{id}/premium', { ...admin, json: { days: 30 } });
const spare = await d.request('POST', '/api/instances/create', { ...admin, json: { name: 'spare', owner: 'acme', sandbox: true } });
const rotated = await call('POST', `/api/instances/${spare.body.instanceId as string}/rotate-key`, '/api/instances/{id}/rotate-key', admin);
void rotated;
await call('DELETE', `/api/instances/${spare.body.instanceId as string}`, '/api/instances/{id}', admin);

// Pairing and lifecycle.
await call('POST', i('/sandbox/scan'), '/api/{id}/sandbox/scan', key);
await call('POST', i('/sandbox/disconnect'), '/api/{id}/sandbox/disconnect', key);
await call('POST', i('/restart'), '/api/{id}/restart', key);
const after = await waitFor(async () => {
  const s = (await d.request('GET', i('/status'), key)).body.status as string;
  return s === 'connected' || s === 'qr_code_generated' ? s : null;
}, 5_000, 'connected or a QR');
if (after !== 'connected') await d.request('POST', i('/sandbox/scan'), key);
const rotatedOwn = await call('POST', i('/rotate-key'), '/api/{id}/rotate-key', key);
key = { key: rotatedOwn.body.apiKey as string };
await call('PUT', i('/webhook'), '/api/{id}/webhook', {
  ...key,
  json: { url: hook, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', events: ['message.received', 'message.status'], headers: { Authorization: 'Bearer 9f86d081884c7d65' }, filters: { ignoreChats: ['+15550009999'] } },
});
await call('GET', i('/webhook'), '/api/{id}/webhook', key);
await call('POST', i('/webhook/test'), '/api/{id}/webhook/test', key);

// Sending, and what the other side does.
const sent = await d.request('POST', i('/send'), { ...key, json: { phone: PHONE, message: 'Hello!' } });
const messageId = sent.body.messageId as string;
const form = new FormData();
form.set('phone', PHONE);
form.set('caption', 'Our menu');
form.set('file', new Blob([Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n')], { type: 'application/pdf' }), 'menu.pdf');
await call('POST', i('/send-media'), '/api/{id}/send-media', { ...key, body: form });
await call('POST', i('/send-location'), '/api/{id}/send-location', { ...key, json: { phone: PHONE, latitude: 52.52, longitude: 13.405, name: 'Shop' } });
await call('POST', i('/send-contact'), '/api/{id}/send-contact', { ...key, json: { phone: PHONE, contacts: [{ name: 'Support', phone: '+15557654321' }] } });
await call('POST', i('/send-poll'), '/api/{id}/send-poll', { ...key, json: { phone: PHONE, question: 'Lunch?', options: ['Pizza', 'Sushi'] } });
await call('POST', i('/sandbox/receipt'), '/api/{id}/sandbox/receipt', { ...key, json: { messageId, status: 'read' } });
await call('POST', i('/sandbox/react'), '/api/{id}/sandbox/react', { ...key, json: { messageId, emoji: '👍', from: PHONE } });
const inbound = await call('POST', i('/sandbox/inbound'), '/api/{id}/sandbox/inbound', { ...key, json: { from: PHONE, name: 'Ann', message: 'Do you deliver?' } });
await d.request('POST', i('/sandbox/inbound'), { ...key, json: { from: '+15557654321', chatId: GROUP, message: 'Hi all' } });
const theirs = inbound.body.messageId as string;
await call('POST', i('/react'), '/api/{id}/react', { ...key, json: { chatId: CHAT, messageId: theirs, emoji: '❤️' } });
await call('POST', `${i(`/messages/${messageId}/edit`)}`, '/api/{id}/messages/{messageId}/edit', { ...key, json: { chatId: CHAT, message: 'Hello again!' } });
await call('GET', i(`/messages/${messageId}`), '/api/{id}/messages/{messageId}', key);
await call('POST', i('/read'), '/api/{id}/read', { ...key, json: { chatId: CHAT } });
await call('POST', i('/presence'), '/api/{id}/presence', { ...key, json: { chatId: CHAT, state: 'typing' } });
await call('POST', i('/contacts/check'), '/api/{id}/contacts/check', { ...key, json: { phones: [PHONE] } });
await call('GET', i('/groups'), '/api/{id}/groups', key);
await call('GET', i(`/groups/${GROUP}`), '/api/{id}/groups/{chatId}', key);
await call('GET', i('/chats'), '/api/{id}/chats', key);
await call('GET', i(`/chats/${CHAT}/messages?limit=3`), '/api/{id}/chats/{chatId}/messages', key);
await call('GET', i('/sandbox/sent'), '/api/{id}/sandbox/sent', key);
await call('GET', i('/sandbox/actions'), '/api/{id}/sandbox/actions', key);
await call('DELETE', `${i(`/messages/${messageId}`)}?chatId=${CHAT}`, '/api/{id}/messages/{messageId}', key);

// Webhook deliveries.
await waitFor(async () => ((await d.request('GET', i('/webhook/deliveries'), key)).body.deliveries as unknown[]).length >= 2, 10_000, 'deliveries');
const deliveries = await call('GET', i('/webhook/deliveries?limit=2'), '/api/{id}/webhook/deliveries', key);
const deliveryId = (deliveries.body.deliveries as Array<{ id?: string; deliveryId?: string }>)[0];
await call('POST', i(`/webhook/deliveries/${deliveryId?.deliveryId ?? deliveryId?.id ?? ''}/redeliver`), '/api/{id}/webhook/deliveries/{deliveryId}/redeliver', key);

// A flow with a handover, reached by an inbound message, then released.
const flow = {
  name: 'Support',
  start: 'welcome',
  nodes: {
    welcome: { type: 'message', text: 'Hi {{name}}! Type "agent" to talk to a person.', next: 'menu' },
    menu: { type: 'condition', rules: [{ contains: 'agent', next: 'human' }], else: 'welcome' },
    human: { type: 'handover', text: 'A person will answer shortly.' },
  },
};
await call('PUT', i('/flow'), '/api/{id}/flow', { ...key, json: flow });
await call('GET', i('/flow'), '/api/{id}/flow', key);
for (const message of ['hi', 'agent please']) await d.request('POST', i('/sandbox/inbound'), { ...key, json: { from: '+15550001111', name: 'Bo', message } });
await waitFor(async () => ((await d.request('GET', i('/handovers'), key)).body.handovers as unknown[]).length === 1, 5_000, 'a handover');
await call('GET', i('/handovers'), '/api/{id}/handovers', key);
await call('POST', i('/handover/release'), '/api/{id}/handover/release', { ...key, json: { phone: '+15550001111' } });
await call('DELETE', i('/flow'), '/api/{id}/flow', key);
await call('DELETE', i('/webhook'), '/api/{id}/webhook', key);
await call('POST', i('/logout'), '/api/{id}/logout', key);
await waitFor(async () => (await d.request('GET', i('/qr-code'), key)).status === 200, 5_000, 'a QR after the logout');
const qr = await call('GET', i('/qr-code'), '/api/{id}/qr-code', key);
// The PNG data URL is kilobytes of base64: the example keeps its start.
recorded.set('GET /api/{id}/qr-code', { ...(qr.body as object), qrImage: `${String(qr.body.qrImage).slice(0, 60)}...` });
await call('GET', `/api/instances/${id}`, '/api/instances/{id}', admin);

await d.close();
receiver.close();

const header = `// Generated by scripts/record-openapi-examples.ts from real answers of a sandbox instance; do not
// edit by hand (run the script again). Examples written in a route definition win over these.
`;
const body = `export const RECORDED_EXAMPLES: Readonly<Record<string, unknown>> = ${JSON.stringify(Object.fromEntries([...recorded].sort()), null, 2)};\n`;
await writeFile(new URL('../src/openapi/recorded-examples.ts', import.meta.url), header + body);
process.stdout.write(`recorded ${recorded.size} examples\n`);
