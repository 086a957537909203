import test from 'ava';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { SafeRegex } from '../../src/flows/safe-regex.js';
import { FLOW_LIMITS } from '../../src/flows/types.js';
import { capturingLogger, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

// Rule guarded (issue 21 item 1): one tenant's flow regexes cannot stall the daemon. A condition
// node of 49 rules, each 12 patterns like [ab]*a[ab]{99}q, against one 4,096-character a/b
// message kept /healthz waiting 13.7 s: re2js's DFA gives up on such patterns and its fallback
// costs input length x program size, on the event loop. Now the per-node and per-flow totals are
// bounded when the flow is saved, and matching runs on a worker thread within a time budget.

const LIMITS = { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram, span: FLOW_LIMITS.regexSpan };
/** Last characters of the patterns: none is a or b, and no two fold to the same letter. */
const ENDS = 'cdefghijklmnopqrstuvwxyz0123456789_,;:=@#%&~!<>"';

/** Rule `k`: 12 patterns [ab]*a[ab]{99}X, each X its own. */
function abRule(k: number, next: string): { regex: string; next: string } {
  const regex = Array.from({ length: 12 }, (_, i) => `[ab]*a[ab]{99}${ENDS[(k * 12 + i) % ENDS.length]}`).join('|');
  return { regex, next };
}

/** 4,096 characters of a and b, the same every run. */
function abMessage(seed: number): string {
  let state = seed;
  let out = '';
  for (let i = 0; i < 4096; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out += state & 0x10000 ? 'a' : 'b';
  }
  return out;
}

/**
 * Polls GET /healthz every 20 ms from another thread, as an outside client would: the daemon runs
 * in this test's process, so a poller on this event loop would stall along with it and not see it.
 */
function pollHealth(url: string): { stop(): Promise<Array<{ ms: number; status: number }>> } {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const waits = [];
    let stopped = false;
    parentPort.once('message', () => { stopped = true; });
    (async () => {
      while (!stopped) {
        const started = performance.now();
        const res = await fetch(workerData.url + '/healthz', { signal: AbortSignal.timeout(30000) });
        await res.text();
        waits.push({ ms: performance.now() - started, status: res.status });
        await new Promise((r) => setTimeout(r, 20));
      }
      parentPort.postMessage(waits);
    })();`;
  const worker = new Worker(code, { eval: true, workerData: { url } });
  const result = new Promise<Array<{ ms: number; status: number }>>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const waits = await result;
      await worker.terminate();
      return waits;
    },
  };
}

async function sandbox(d: TestDaemon): Promise<{ id: string; key: string }> {
  return d.connectedSandbox();
}

test('the flow from issue 21 (49 rules of 12 [ab]*a[ab]{99}q patterns) is refused when saved, naming the node and the rule', async (t) => {
  const d = await startTestDaemon();
  try {
    const { id, key } = await sandbox(d);
    const flow = {
      name: 'stall',
      start: 'menu',
      nodes: {
        menu: { type: 'condition', rules: Array.from({ length: 49 }, (_, k) => abRule(k, 'hit')), else: 'miss' },
        hit: { type: 'message', text: 'matched' },
        miss: { type: 'message', text: 'no match' },
      },
    };
    const put = await d.request('PUT', `/api/${id}/flow`, { key, json: flow });
    t.is(put.status, 400, JSON.stringify(put.body).slice(0, 300));
    t.is(put.body.error.code, 'INVALID_FIELD');
    t.is(put.body.error.node, 'menu');
    // Four rules fit (4 x 1,249 instructions); the fifth crosses the per-node limit.
    t.regex(put.body.error.message, /^node "menu": rules\[4\]\.regex refused: the regexes of this condition node add up to \d+ RE2 steps once repetitions are expanded \(limit 5000 per condition node/);
    t.is((await d.request('GET', `/api/${id}/flow`, { key })).status, 404, 'nothing was stored');
  } finally {
    await d.close();
  }
});

test('a flow at the regex limits is accepted and works; /healthz answers within 1 s while hostile messages are matched', async (t) => {
  const log = capturingLogger('info');
  const d = await startTestDaemon({ logger: log.logger });
  try {
    const { id, key } = await sandbox(d);
    const rules = Array.from({ length: 4 }, (_, k) => abRule(k, `hit${k}`));
    const nodeProgram = rules.reduce((sum, r) => sum + SafeRegex.compile(r.regex, LIMITS).size, 0);
    t.log(`one node: ${rules.length} rules, ${nodeProgram} RE2 instructions (limit ${FLOW_LIMITS.regexNodeProgram})`);
    t.true(nodeProgram <= FLOW_LIMITS.regexNodeProgram && nodeProgram > FLOW_LIMITS.regexNodeProgram * 0.95, 'the node is at the per-node limit');
    // Ten such nodes bring the flow to its limit too (the nine spares are not on the menu's path).
    const nodes: Record<string, unknown> = {
      menu: { type: 'condition', rules, else: 'miss' },
      miss: { type: 'message', text: 'no match' },
    };
    for (let k = 0; k < 4; k++) nodes[`hit${k}`] = { type: 'message', text: `rule ${k}` };
    for (let s = 1; s < 10; s++) nodes[`spare${s}`] = { type: 'condition', rules, else: 'miss' };
    t.true(10 * nodeProgram <= FLOW_LIMITS.regexFlowProgram && 10 * nodeProgram > FLOW_LIMITS.regexFlowProgram * 0.95, 'the flow is at the per-flow limit');
    const put = await d.request('PUT', `/api/${id}/flow`, { key, json: { name: 'at-the-limits', start: 'menu', nodes } });
    t.is(put.status, 200, JSON.stringify(put.body).slice(0, 300));

    const sent = async () => (await d.request('GET', `/api/${id}/sandbox/sent`, { key })).body.messages as Array<{ phone: string; message: string }>;
    // The flow works: a message that matches the third rule's sixth pattern takes that rule.
    const ann = await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15550000009', message: `bbb a${'b'.repeat(99)}${ENDS[2 * 12 + 5]}`, name: 'Ann' } });
    t.is(ann.status, 200);
    await d.flows.idle();
    t.deepEqual((await sent()).map((m) => m.message), ['rule 2']);

    // Three chats send a hostile message each; without the worker each held the event loop for
    // about 1-2 s here. /healthz is polled from before the first until the bot has handled all three.
    const hostile = [abMessage(1), abMessage(2), abMessage(3)];
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const poller = pollHealth(d.url);
    await new Promise((r) => setTimeout(r, 200)); // the poller is up and answered
    for (const [i, message] of hostile.entries()) {
      const res = await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: `+1555000000${i}`, message, name: 'Eve' } });
      t.is(res.status, 200);
    }
    await d.flows.idle();
    const waits = await poller.stop();
    delay.disable();
    const slowest = Math.max(...waits.map((w) => w.ms));
    t.log(`/healthz answered ${waits.length} times while 3 hostile messages were matched, slowest in ${slowest.toFixed(0)} ms; event loop delay max ${(delay.max / 1e6).toFixed(0)} ms`);
    t.true(waits.length >= 3, 'polled while the messages were being matched');
    for (const w of waits) t.is(w.status, 200);
    t.true(slowest < 1000, `/healthz took ${slowest.toFixed(0)} ms`);

    t.deepEqual((await sent()).map((m) => m.message), ['rule 2', 'no match', 'no match', 'no match']);
    // Each ran out of its budget: logged with the node and rule, never with the message.
    const budget = log.lines.filter((l) => String(l.msg).includes('time budget'));
    t.is(budget.length, 3);
    for (const line of budget) t.like(line, { instanceId: id, node: 'menu', budgetMs: FLOW_LIMITS.matchBudgetMs });
    for (const line of budget) t.true(typeof line.rule === 'number' && line.rule >= 0 && line.rule < 4);
    const logged = JSON.stringify(log.lines);
    for (const message of hostile) t.false(logged.includes(message.slice(0, 64)), 'no message body in the log');
  } finally {
    await d.close();
  }
});
