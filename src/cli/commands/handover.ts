import type { Command } from 'commander';
import { seg, withApi } from '../api.js';
import { GatewayError } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
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
    .command('release <id> <phone>')
    .description('give the chat with +PHONE back to the bot')
    .action(async (id: string, phone: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      if (!isE164(phone)) throw new GatewayError('USAGE', `phone must be E.164: "+" then 7 to 15 digits, the first not 0 (got ${JSON.stringify(String(phone).slice(0, 40))})`);
      await withApi(dataDir, (api) => api.call('POST', `/api/${seg(id)}/handover/release`, { phone }));
      output(json, { instanceId: id, phone, released: true }, `Released ${phone} on ${id}: the bot answers this chat again`);
    });

  return handover;
}
