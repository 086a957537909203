import type { Command } from 'commander';
import { seg, withApi } from '../api.js';
import { GatewayError } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
import { CHAT_ID_PATTERN } from '../../schemas/common.js';
import { globals, output } from '../context.js';

interface HandoverView {
  phone: string;
  chatId: string;
  fromName: string | null;
  flow: string;
  node: string;
  openedAt: string;
  expiresAt: string;
}

/** `gateway handover list|release`: chats a flow handed to a person. */
export function registerHandover(program: Command): Command {
  const handover = program.command('handover').description('conversations handed over from the chatbot to a person');

  handover
    .command('list <id>')
    .description('list open handovers of an instance, oldest first')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const body = await withApi(dataDir, (api) => api.call('GET', `/api/${seg(id)}/handovers`));
      const open = body.handovers as HandoverView[];
      const lines = open.map((h) => `${h.phone}  since ${h.openedAt}  until ${h.expiresAt}  ${h.flow}/${h.node}${h.fromName ? `  ${h.fromName}` : ''}`);
      output(json, { instanceId: id, handovers: open }, lines.length ? lines.join('\n') : `No open handovers for ${id}`);
    });

  handover
    .command('release <id> <chat>')
    .description('give a chat back to the bot: +PHONE, or its chat id (NNN@s.whatsapp.net, NNN@lid, a group) as `handover list` shows it')
    .action(async (id: string, chat: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      let body: { phone: string } | { chatId: string };
      if (isE164(chat)) body = { phone: chat };
      else if (new RegExp(CHAT_ID_PATTERN).test(chat)) body = { chatId: chat };
      else throw new GatewayError('USAGE', `expected +PHONE (E.164: "+" then 7 to 15 digits, the first not 0) or a chat id like 15551234567@s.whatsapp.net (got ${JSON.stringify(String(chat).slice(0, 40))})`);
      const released = await withApi(dataDir, (api) => api.call('POST', `/api/${seg(id)}/handover/release`, body));
      output(json, { instanceId: id, phone: released.phone, chatId: released.chatId, released: true }, `Released ${chat} on ${id}: the bot answers this chat again`);
    });

  return handover;
}
