import { parentPort, workerData } from 'node:worker_threads';
import { SafeRegex, type RegexLimits } from './safe-regex.js';

/**
 * The thread flow regexes run on (started by regex-matcher.ts). re2js is linear in the input but
 * not in the pattern: where its lazy DFA gives up (`[ab]*a[ab]{99}q`) a match costs up to input
 * length x program size, ~1.8 s for one condition node at the limits. Here that time is spent off
 * the daemon's event loop, and the matcher ends this thread when a message's budget runs out.
 */

/** What the matcher gives the thread when it starts it. */
export interface WorkerSetup {
  limits: RegexLimits;
  /** One Int32: the index of the pattern being tried, read by the matcher when the budget runs out. */
  progress: SharedArrayBuffer;
  /** Compiled patterns kept between messages: at most this many, and this many RE2 instructions. */
  keep: { patterns: number; program: number };
}

/** One message against a node's regexes, in rule order. */
export interface MatchRequest {
  id: number;
  patterns: readonly string[];
  text: string;
}

/** `index`: the first pattern that matched, -1 none; `error`: a pattern did not compile here. */
export type WorkerReply = { ready: true } | { id: number; index: number } | { id: number; error: string };

const setup = workerData as WorkerSetup;
const progress = new Int32Array(setup.progress);
const port = parentPort!;
/** Least recently used first. */
const compiled = new Map<string, SafeRegex>();
let keptProgram = 0;

function regex(source: string): SafeRegex {
  let re = compiled.get(source);
  if (re !== undefined) {
    compiled.delete(source);
    compiled.set(source, re);
    return re;
  }
  re = SafeRegex.compile(source, setup.limits);
  compiled.set(source, re);
  keptProgram += re.size;
  while (compiled.size > setup.keep.patterns || keptProgram > setup.keep.program) {
    const [oldest, old] = compiled.entries().next().value!;
    compiled.delete(oldest);
    keptProgram -= old.size;
  }
  return re;
}

function reply(message: WorkerReply): void {
  port.postMessage(message);
}

/**
 * A new worker runs re2js cold, and the first message would pay for that inside its budget (tens of
 * milliseconds, more on a busy machine): every new worker follows one that ran out of time. So it
 * goes through parsing, compiling, the DFA and the DFA giving up before it says it is ready.
 */
function warmUp(): void {
  const re = SafeRegex.compile('^(?:\\s*(?:hi|hello)\\b|#?\\d{4,10}$|\\S+@\\w+\\.com)|[ab]*a[ab]{12}é', setup.limits);
  let text = '';
  for (let i = 0; i < 2_000; i++) text += (i * 7919) % 3 === 0 ? 'a' : 'b';
  for (let i = 0; i < 3; i++) re.test(text);
}

port.on('message', (req: MatchRequest) => {
  try {
    for (let i = 0; i < req.patterns.length; i++) {
      Atomics.store(progress, 0, i);
      if (regex(req.patterns[i]!).test(req.text)) return reply({ id: req.id, index: i });
    }
    reply({ id: req.id, index: -1 });
  } catch (err) {
    // The patterns were validated when the flow was saved; this is a bug, not the message's fault.
    reply({ id: req.id, error: err instanceof Error ? err.message : String(err) });
  }
});
warmUp();
reply({ ready: true });
