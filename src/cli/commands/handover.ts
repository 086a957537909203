import type { Command } from 'commander';
import { systemClock } from '../../domain/clock.js';
import { UserError } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
import { FlowFiles, handoverView, isOpen } from '../../flows/store.js';
import { openContext, output, requireInstance } from '../context.js';

/** `gateway handover list|release`: chats a flow handed to a person. */
export function registerHandover(program: Command): Command {
  const handover = program.command('handover').description('conversations handed over from the chatbot to a person');

  handover
    .command('list <id>')
    .description('list open handovers of an instance, oldest first')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      requireInstance(ctx, id);
      const doc = await new FlowFiles(ctx.dataDir).readHandovers(id);
      const now = systemClock.now();
      const open = Object.values(doc.handovers)
        .filter((h) => isOpen(h, now))
        .sort((a, b) => a.openedAt.localeCompare(b.openedAt))
        .map(handoverView);
      const lines = open.map((h) => `${h.phone}  since ${h.openedAt}  until ${h.expiresAt}  ${h.flow}/${h.node}${h.fromName ? `  ${h.fromName}` : ''}`);
      output(ctx.json, { instanceId: id, handovers: open }, lines.length ? lines.join('\n') : `No open handovers for ${id}`);
    });

  handover
    .command('release <id> <phone>')
    .description('give the chat with +PHONE back to the bot (a running daemon notices within a second)')
    .action(async (id: string, phone: string, _opts: unknown, cmd: Command) => {
      if (!isE164(phone)) throw new UserError(`phone must be E.164: "+" then 7 to 15 digits, the first not 0 (got ${JSON.stringify(String(phone).slice(0, 40))})`, 2);
      const ctx = await openContext(cmd);
      requireInstance(ctx, id);
      const released = await new FlowFiles(ctx.dataDir).releaseHandover(id, phone, systemClock.now());
      if (released.length === 0) throw new UserError(`no open handover for ${phone} on ${id}`, 1);
      output(ctx.json, { instanceId: id, phone, released: true }, `Released ${phone} on ${id}: the bot answers this chat again`);
    });

  return handover;
}
