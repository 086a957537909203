import { spawnSync } from 'node:child_process';
import test from 'ava';

/** Whether util-linux `script` (a pseudo-terminal for a child process) is installed. */
export const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * `test` for tests that drive the CLI in a pseudo-terminal through `script`. Without it they are
 * skipped on a developer's machine; in CI (CI=true, where Debian's essential bsdutils provides it)
 * they run and fail, never pass silently.
 */
export const terminalTest = hasScript || process.env.CI === 'true' ? test : test.skip;
