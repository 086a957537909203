import { GatewayError } from '../domain/errors.js';

/**
 * Asks a yes/no question before something that cannot be undone. On a terminal: the question (on
 * stderr, so a --json answer on stdout stays clean), default no; a "no" or Ctrl-C ends the command
 * with nothing done. Elsewhere nobody can answer: the command fails with `refusal` (exit 2) rather
 * than going ahead silently; scripts pass --yes.
 */
export async function confirmOnTerminal(question: string, refusal: string): Promise<void> {
  if (!(process.stdin.isTTY && process.stderr.isTTY)) throw new GatewayError('USAGE', refusal);
  const { confirm } = await import('@inquirer/prompts');
  let yes: boolean;
  try {
    yes = await confirm({ message: question, default: false }, { output: process.stderr });
  } catch (err) {
    if (err instanceof Error && err.name === 'ExitPromptError') {
      process.stderr.write('\ngateway: cancelled; nothing was changed\n');
      process.exit(130);
    }
    throw err;
  }
  if (!yes) {
    process.stderr.write('gateway: not confirmed; nothing was changed\n');
    process.exit(1);
  }
}
