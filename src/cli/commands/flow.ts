import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { systemClock } from '../../domain/clock.js';
import { UserError, errorMessage } from '../../domain/errors.js';
import { FlowFiles } from '../../flows/store.js';
import { FLOW_LIMITS, type Flow } from '../../flows/types.js';
import { FlowValidationError, validateFlow } from '../../flows/validate.js';
import { openContext, output, requireInstance } from '../context.js';

/** Flow files are small; a larger one is refused before it is parsed. */
const MAX_FLOW_FILE = 256 * 1024;

async function readFlowFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read (${errorMessage(err)})`, 2);
  }
  if (text.length > MAX_FLOW_FILE) throw new UserError(`${file}: larger than ${MAX_FLOW_FILE / 1024} KiB`, 2);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UserError(`${file}: not valid JSON (${errorMessage(err)})`, 2);
  }
}

/** `gateway flow set|show|clear`: the chatbot flow of an instance (a running daemon picks changes up within a second). */
export function registerFlow(program: Command): Command {
  const flow = program.command('flow').description('chatbot flows: set, show and clear the flow of an instance');

  flow
    .command('set <id> <file>')
    .description(`validate a flow JSON file and make it the instance's flow (at most ${FLOW_LIMITS.nodes} nodes)`)
    .action(async (id: string, file: string, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      requireInstance(ctx, id);
      const input = await readFlowFile(file);
      let validated: Flow;
      try {
        validated = validateFlow(input);
      } catch (err) {
        if (err instanceof FlowValidationError) throw new UserError(`${file}: ${err.message}`, 2);
        throw err;
      }
      const stored = await new FlowFiles(ctx.dataDir).writeFlow(id, validated, systemClock.now());
      const nodes = Object.keys(stored.flow.nodes).length;
      output(
        ctx.json,
        { instanceId: id, name: stored.flow.name, start: stored.flow.start, nodes, revision: stored.revision, updatedAt: stored.updatedAt },
        `Flow "${stored.flow.name}" (${nodes} nodes, starts at "${stored.flow.start}") set for ${id}`,
      );
    });

  flow
    .command('show <id>')
    .description('print the flow of an instance')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      requireInstance(ctx, id);
      const stored = await new FlowFiles(ctx.dataDir).readFlow(id);
      if (!stored) {
        output(ctx.json, { instanceId: id, flow: null }, `No flow set for ${id}`);
        return;
      }
      output(ctx.json, { instanceId: id, flow: stored.flow, revision: stored.revision, updatedAt: stored.updatedAt }, JSON.stringify(stored.flow, null, 2));
    });

  flow
    .command('clear <id>')
    .description('remove the flow of an instance (the bot falls silent; open handovers stay until released)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      requireInstance(ctx, id);
      const cleared = await new FlowFiles(ctx.dataDir).clearFlow(id);
      output(ctx.json, { instanceId: id, cleared }, cleared ? `Flow of ${id} cleared` : `${id} had no flow`);
    });

  return flow;
}
