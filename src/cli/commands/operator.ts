import { InvalidArgumentError, type Command } from 'commander';
import { seg, withApi } from '../api.js';
import { globals, output, outputFlushed } from '../context.js';

interface OperatorView {
  name: string;
  role: 'admin' | 'agent';
  instances: string[];
  createdAt: string;
  passwordChangedAt: string;
}

function parseRole(value: string): 'admin' | 'agent' {
  if (value !== 'admin' && value !== 'agent') throw new InvalidArgumentError('expected admin or agent');
  return value;
}

function parseIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) throw new InvalidArgumentError('expected instance ids separated by commas');
  return ids;
}

const whom = (o: { role: string; instances: string[] }): string => (o.role === 'admin' ? 'every instance' : o.instances.length > 0 ? o.instances.join(', ') : 'no instance yet');

/** `gateway operator add|list|remove|reset`: named panel accounts beside the server secret. */
export function registerOperator(program: Command): Command {
  const operator = program.command('operator').description('operators: named panel accounts (admin: everything; agent: the inbox, chats and status of its instances)');

  operator
    .command('add <name>')
    .description('add an operator; prints its one-time password (stored only as a scrypt hash)')
    .requiredOption('--role <role>', 'admin or agent', parseRole)
    .option('--instances <ids>', "an agent's instances, separated by commas", parseIds)
    .action(async (name: string, opts: { role: 'admin' | 'agent'; instances?: string[] }, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const body = { name, role: opts.role, ...(opts.instances ? { instances: opts.instances } : {}) };
      const made = await withApi(dataDir, (api) => api.call('POST', '/api/operators', body));
      await outputFlushed(
        json,
        { name: made.name, role: made.role, password: made.password },
        `Operator ${String(made.name)} (${String(made.role)}: ${whom(made as unknown as OperatorView)})\nOne-time password (shown once, hand it over now): ${String(made.password)}\nSign in at /panel/ with "Operator" and this password.`,
      );
    });

  operator
    .command('list')
    .description('list operators (never their passwords)')
    .action(async (_opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const body = await withApi(dataDir, (api) => api.call('GET', '/api/operators'));
      const list = body.operators as OperatorView[];
      output(json, { operators: list }, list.length ? list.map((o) => `${o.name}  ${o.role}  ${whom(o)}  since ${o.createdAt}`).join('\n') : 'No operators yet: add one with `gateway operator add NAME --role admin|agent`');
    });

  operator
    .command('remove <name>')
    .description('remove an operator (its panel sessions end)')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      await withApi(dataDir, (api) => api.call('DELETE', `/api/operators/${seg(name)}`));
      output(json, { name, deleted: true }, `Removed operator ${name}`);
    });

  operator
    .command('reset <name>')
    .description('give an operator a new one-time password (its panel sessions end)')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const made = await withApi(dataDir, (api) => api.call('POST', `/api/operators/${seg(name)}/reset`));
      await outputFlushed(json, { name: made.name, role: made.role, password: made.password }, `New one-time password for ${name} (shown once): ${String(made.password)}`);
    });

  return operator;
}
