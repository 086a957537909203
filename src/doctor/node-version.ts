import type { CheckResult } from './types.js';

export const MIN_NODE = '20.19.0';

/** Compares "a.b.c" versions numerically; a leading "v" is ignored. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => v.replace(/^v/, '').split(/[.-]/).slice(0, 3).map((x) => Number.parseInt(x, 10) || 0);
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

export function checkNodeVersion(version = process.versions.node): CheckResult {
  if (compareVersions(version, MIN_NODE) >= 0) return { name: 'node', status: 'ok', message: `Node ${version} (>= ${MIN_NODE} required)` };
  return {
    name: 'node',
    status: 'fail',
    message: `Node ${version} is too old: the gateway needs ${MIN_NODE} or later`,
    fix: `install Node ${MIN_NODE.replace(/\.0$/, '')} or later (Node 22 LTS works too) and make the service's ExecStart use it (\`node --version\`)`,
  };
}
