/**
 * Guards issue 24, "AI agents (MCP)", through the protocol double with real Baileys: the SDK's MCP
 * Client on the BUILT daemon (bin/gateway, a child process; build first) sends a text with the
 * send_text tool and the double's contact decrypts it; send_media fetches a file from a URL and the
 * contact decrypts exactly those bytes; check_numbers asks WhatsApp (usync); the contact's read
 * receipt shows in get_message; its reply in get_chat_messages; a group in list_groups.
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startGatewayOnDouble, type GatewayOnDouble } from '../protocol-double/child.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { waitFor } from '../helpers/daemon.js';

let gw: GatewayOnDouble;
let client: Client;
let files: Server;
let filesUrl = '';
const picture = randomPng(40);

test.before(async () => {
  gw = await startGatewayOnDouble({ double: { assumedPreKeys: 0 }, config: { media: { maxBytes: 1024 * 1024 } } });
  files = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(picture));
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  client = new Client({ name: 'double-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.daemon.url}/api/${gw.id}/mcp`), { requestInit: { headers: { authorization: `Bearer ${gw.key}` } } }));
});

test.after.always(async () => {
  await client?.close();
  files?.close();
  await gw?.close();
});

test.afterEach.always((t) => {
  if (gw.double.errors.length > 0) t.log(gw.double.errors);
  if (!t.passed) t.log(gw.output().slice(-6000));
});

async function call(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent!;
}

test.serial('send_text reaches the contact, decrypted by real Signal; its read receipt shows in get_message, its reply in get_chat_messages', async (t) => {
  const ann = await gw.double.contact('+15550000301', { name: 'Ann' });
  const sent = await call('send_text', { phone: ann.phone, message: 'Hello Ann, from an AI agent' });
  t.like(sent, { success: true, instanceId: gw.id, to: ann.jid });
  const m = await ann.nextMessage();
  t.is(m.id, sent.messageId as string);
  t.is(m.text, 'Hello Ann, from an AI agent');
  t.is(m.chat, ann.jid);

  ann.receipt(m, 'read');
  await gw.waitEvent('message.status', (e) => e.data.messageId === m.id && e.data.status === 'read');
  t.like(await call('get_message', { messageId: m.id }), { messageId: m.id, chatId: ann.jid, fromMe: true, status: 'read', text: 'Hello Ann, from an AI agent' });

  const replyId = await ann.sendText(gw.double.accountJid(), 'Hi agent!');
  await gw.waitEvent('message.received', (e) => e.data.messageId === replyId);
  const history = await call('get_chat_messages', { chatId: ann.jid, limit: 2 });
  t.deepEqual(
    (history.messages as Array<{ messageId: string; fromMe: boolean; text?: string }>).map((x) => [x.messageId, x.fromMe, x.text]),
    [
      [replyId, false, 'Hi agent!'],
      [m.id, true, 'Hello Ann, from an AI agent'],
    ],
  );
  const chats = (await call('list_chats')).chats as Array<{ chatId: string; phone?: string }>;
  t.like(chats.find((c) => c.chatId === ann.jid), { phone: ann.phone });
  t.deepEqual(gw.double.errors, []);
});

test.serial('send_media fetches the URL and the contact decrypts exactly those bytes; check_numbers asks WhatsApp; list_groups lists a group', async (t) => {
  const bo = await gw.double.contact('+15550000302', { name: 'Bo' });
  const sent = await call('send_media', { phone: bo.phone, url: `${filesUrl}/picture.png`, caption: 'from a URL' });
  t.like(sent, { success: true, to: bo.jid, mediaType: 'image' });
  const m = await bo.nextMessage();
  t.is(m.id, sent.messageId as string);
  t.is(m.message.imageMessage?.mimetype, 'image/png');
  t.is(m.text, 'from a URL');
  t.true(bo.download(m).equals(picture), 'the contact decrypted exactly the fetched bytes');

  const check = await call('check_numbers', { phones: [bo.phone, '+15559999998'] });
  t.deepEqual(check.results, [
    { phone: bo.phone, exists: true, chatId: bo.jid },
    { phone: '+15559999998', exists: false, chatId: null },
  ]);

  const cy = await gw.double.contact('+15550000303', { name: 'Cy' });
  const group = gw.double.group('Agents', [bo, cy]);
  const groups = await waitFor(async () => ((await call('list_groups')).groups as Array<{ chatId: string; subject: string; size: number }>).find((g) => g.chatId === group.jid), 10_000, 'the group');
  t.like(groups, { subject: 'Agents', size: 3 });
  t.deepEqual(gw.double.errors, []);
});
