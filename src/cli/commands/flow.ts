import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { FLOW_LIMITS } from '../../flows/types.js';
import { seg, withApi } from '../api.js';
import { globals, output } from '../context.js';

/** Flow files are small; a larger one is refused before it is parsed. */
const MAX_FLOW_FILE = 256 * 1024;

async function readFlowFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new GatewayError('USAGE', `${file}: cannot read (${errorMessage(err)})`);
  }
  if (text.length > MAX_FLOW_FILE) throw new GatewayError('USAGE', `${file}: larger than ${MAX_FLOW_FILE / 1024} KiB`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new GatewayError('USAGE', `${file}: not valid JSON (${errorMessage(err)})`);
  }
}

interface FlowBody {
  flow: { name: string; start: string; nodes: Record<string, unknown> };
  revision: string;
  updatedAt: string;
}

/** `gateway flow set|show|clear`: the chatbot flow of an instance (the same routes as the API). */
export function registerFlow(program: Command): Command {
  const flow = program.command('flow').description('chatbot flows: set, show and clear the flow of an instance');

  flow
    .command('set <id> <file>')
    .description(`validate a flow JSON file and make it the instance's flow (at most ${FLOW_LIMITS.nodes} nodes)`)
    .action(async (id: string, file: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const input = await readFlowFile(file);
      let stored: FlowBody;
      try {
        stored = (await withApi(dataDir, (api) => api.call('PUT', `/api/${seg(id)}/flow`, input))) as unknown as FlowBody;
      } catch (err) {
        if (err instanceof GatewayError && err.code === 'INVALID_FIELD') throw new GatewayError('INVALID_FIELD', `${file}: ${err.message}`);
        throw err;
      }
      const nodes = Object.keys(stored.flow.nodes).length;
      output(
        json,
        { instanceId: id, name: stored.flow.name, start: stored.flow.start, nodes, revision: stored.revision, updatedAt: stored.updatedAt },
        `Flow "${stored.flow.name}" (${nodes} nodes, starts at "${stored.flow.start}") set for ${id}`,
      );
    });

  flow
    .command('show <id>')
    .description('print the flow of an instance')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const stored = await withApi(dataDir, async (api) => {
        try {
          return (await api.call('GET', `/api/${seg(id)}/flow`)) as unknown as FlowBody;
        } catch (err) {
          // No flow (the instance exists: an unknown id is NOT_FOUND too, but with another message).
          if (err instanceof GatewayError && err.code === 'NOT_FOUND' && err.message.startsWith('no flow')) return null;
          throw err;
        }
      });
      if (!stored) {
        output(json, { instanceId: id, flow: null }, `No flow set for ${id}`);
        return;
      }
      output(json, { instanceId: id, flow: stored.flow, revision: stored.revision, updatedAt: stored.updatedAt }, JSON.stringify(stored.flow, null, 2));
    });

  flow
    .command('clear <id>')
    .description('remove the flow of an instance (the bot falls silent; open handovers stay until released)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const result = await withApi(dataDir, (api) => api.call('DELETE', `/api/${seg(id)}/flow`));
      const cleared = result.deleted === true;
      output(json, { instanceId: id, cleared }, cleared ? `Flow of ${id} cleared` : `${id} had no flow`);
    });

  return flow;
}
