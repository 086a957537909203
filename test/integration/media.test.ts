import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon } from '../helpers/daemon.js';

// Uploads go below os.tmpdir(); this file's daemons run in this worker process, so a temp dir of
// its own shows only their uploads (other test files upload at the same time in other processes).
const OWN_TMP = mkdtempSync(join(tmpdir(), 'gw-media-test-'));
process.env.TMPDIR = OWN_TMP;
test.after.always(() => rm(OWN_TMP, { recursive: true, force: true }));

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5fa2bb40000000049454e44ae426082', 'hex');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');

async function uploads(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((n) => n.startsWith('gateway-upload-'));
}

function form(file: Buffer | null, name: string, type: string, fields: Record<string, string>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  if (file) f.append('file', new Blob([new Uint8Array(file)], { type }), name);
  return f;
}

test.serial('send-media detects the type from content and answers mediaType', async (t) => {
  const d = await startTestDaemon();
  try {
    const { id, key } = await d.connectedSandbox();
    const before = await uploads();
    const image = await d.request('POST', `/api/${id}/send-media`, { key, body: form(PNG, 'a.png', 'image/png', { phone: '+15551234567', caption: 'look' }) });
    t.is(image.status, 200, JSON.stringify(image.body));
    t.is(image.body.mediaType, 'image');
    t.is(image.body.quotaRemaining, 'unlimited');
    // a PDF that claims to be a PNG is a document
    const disguised = await d.request('POST', `/api/${id}/send-media`, { key, body: form(PDF, 'photo.png', 'image/png', { phone: '+15551234567' }) });
    t.is(disguised.body.mediaType, 'document');
    const text = await d.request('POST', `/api/${id}/send-media`, { key, body: form(Buffer.from('a,b\n1,2\n'), 'x.csv', 'text/csv', { phone: '+15551234567' }) });
    t.is(text.body.mediaType, 'document');
    const sent = await d.request('GET', `/api/${id}/sandbox/sent`, { key });
    t.deepEqual(sent.body.messages.map((m: { type: string }) => m.type), ['image', 'document', 'document']);
    t.is(sent.body.messages[0].caption, 'look');
    t.deepEqual(await uploads(), before, 'temp files removed');
  } finally {
    await d.close();
  }
});

test.serial('send-media errors: missing file or phone, too large, wrong type; temp files removed', async (t) => {
  const d = await startTestDaemon({ config: { media: { maxBytes: 1024 } } });
  try {
    const { id, key } = await d.connectedSandbox();
    const before = await uploads();
    const noFile = await d.request('POST', `/api/${id}/send-media`, { key, body: form(null, '', '', { phone: '+15551234567' }) });
    t.is(noFile.status, 400);
    t.is(noFile.body.error.code, 'MISSING_FIELD');
    const noPhone = await d.request('POST', `/api/${id}/send-media`, { key, body: form(PNG, 'a.png', 'image/png', {}) });
    t.is(noPhone.body.error.code, 'MISSING_FIELD');
    const badPhone = await d.request('POST', `/api/${id}/send-media`, { key, body: form(PNG, 'a.png', 'image/png', { phone: '555' }) });
    t.is(badPhone.body.error.code, 'INVALID_PHONE');
    const big = await d.request('POST', `/api/${id}/send-media`, { key, body: form(Buffer.alloc(5000, 1), 'big.bin', 'application/octet-stream', { phone: '+15551234567' }) });
    t.is(big.status, 413);
    t.is(big.body.error.code, 'PAYLOAD_TOO_LARGE');
    const bigStreamed = await d.request('POST', `/api/${id}/send-media`, { key, body: form(Buffer.alloc(1500, 1), 'big.bin', 'application/octet-stream', { phone: '+15551234567' }) });
    t.is(bigStreamed.status, 413);
    const unauth = await d.request('POST', `/api/${id}/send-media`, { key: 'nope', body: form(PNG, 'a.png', 'image/png', { phone: '+15551234567' }) });
    t.is(unauth.status, 401);
    const sent = await d.request('GET', `/api/${id}/sandbox/sent`, { key });
    t.is(sent.body.messages.length, 0, 'nothing was sent');
    t.deepEqual(await uploads(), before);
  } finally {
    await d.close();
  }
});

test.serial('send-media with two files is a 400, not a 413', async (t) => {
  const d = await startTestDaemon();
  try {
    const { id, key } = await d.connectedSandbox();
    const f = form(PNG, 'a.png', 'image/png', { phone: '+15551234567' });
    f.append('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'b.png');
    const res = await d.request('POST', `/api/${id}/send-media`, { key, body: f });
    t.is(res.status, 400);
    t.is(res.body.error.code, 'INVALID_FIELD');
  } finally {
    await d.close();
  }
});
