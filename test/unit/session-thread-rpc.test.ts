import test from 'ava';
import { MessageChannel } from 'node:worker_threads';
import { GatewayError } from '../../src/domain/errors.js';
import { Endpoint, type WireMessage } from '../../src/connection/threads/rpc.js';
import { daemonPreloads } from '../../src/connection/threads/preloads.js';

// Issue 26 item 3 (sessions on threads of their own): what crosses between the daemon's thread and a
// session thread. The rules: a call is answered once, with its value or its error; a GatewayError
// is a GatewayError again on the other side, with its code, retry-after, detail and public message
// (the HTTP layer answers by them); an argument that cannot cross fails the call, not the daemon;
// when the other side is gone every waiting call fails at once, and so does every later one. Over a
// real MessageChannel, as between threads.

function pair(): { a: Endpoint; b: Endpoint; close(): void } {
  const { port1, port2 } = new MessageChannel();
  const a = new Endpoint(port1);
  const b = new Endpoint(port2);
  port1.on('message', (m: WireMessage) => a.receive(m));
  port2.on('message', (m: WireMessage) => b.receive(m));
  return {
    a,
    b,
    close: () => {
      port1.close();
      port2.close();
    },
  };
}

test('a call is answered with its value; bytes cross whole; a note is not answered', async (t) => {
  const { a, b, close } = pair();
  try {
    const notes: unknown[] = [];
    b.on('add', (x: number, y: number) => x + y)
      .on('later', async (v: string) => `${v}!`)
      .on('bytes', (n: number) => new Uint8Array(n).fill(7))
      .on('tell', (v: string) => void notes.push(v));
    t.is(await a.call<number>('add', [2, 3]), 5);
    t.is(await a.call<string>('later', ['done']), 'done!');
    const bytes = await a.call<Uint8Array>('bytes', [1000]);
    t.is(bytes.length, 1000);
    t.true(bytes.every((x) => x === 7));
    a.note('tell', ['one']);
    await a.call('add', [0, 0]); // after the note, on the same port
    t.deepEqual(notes, ['one']);
  } finally {
    close();
  }
});

test('a GatewayError crosses with its code, retry-after, detail and public message; any other error with its message; an unknown call is an error', async (t) => {
  const { a, b, close } = pair();
  try {
    b.on('busy', () => {
      throw new GatewayError('RATE_LIMITED', 'too many for instance x', { retryAfter: 7, detail: { node: 'n1' }, publicMessage: 'slow down' });
    })
      .on('boom', async () => {
        throw new TypeError('not a function');
      })
      .on('odd', () => {
        throw 'a string'; // eslint-disable-line @typescript-eslint/only-throw-error -- what a dependency may do
      });
    const busy = await t.throwsAsync(a.call('busy', []));
    t.true(busy instanceof GatewayError);
    const g = busy as GatewayError;
    t.is(g.code, 'RATE_LIMITED');
    t.is(g.status, 429);
    t.is(g.retryAfter, 7);
    t.deepEqual(g.detail, { node: 'n1' });
    t.is(g.publicMessage, 'slow down');
    t.is(g.message, 'too many for instance x');
    const boom = await t.throwsAsync(a.call('boom', []));
    t.false(boom instanceof GatewayError);
    t.is(boom?.name, 'TypeError');
    t.is(boom?.message, 'not a function');
    t.is((await t.throwsAsync(a.call('odd', [])))?.message, 'a string');
    t.regex((await t.throwsAsync(a.call('nothing', [])))?.message ?? '', /no such call: nothing/);
  } finally {
    close();
  }
});

test('an argument or a result that cannot cross fails that call only', async (t) => {
  const { a, b, close } = pair();
  try {
    b.on('echo', (v: unknown) => v).on('fn', () => () => 1);
    await t.throwsAsync(a.call('echo', [() => 1]), { name: 'DataCloneError' });
    await t.throwsAsync(a.call('fn', []), { name: 'DataCloneError' });
    t.is(await a.call('echo', ['still fine']), 'still fine');
  } finally {
    close();
  }
});

test('when the other side is gone, the waiting calls fail with the reason, and so does every later one', async (t) => {
  const { a, b, close } = pair();
  try {
    b.on('never', () => new Promise(() => undefined));
    const waiting = a.call('never', []);
    await new Promise((r) => setTimeout(r, 20));
    const gone = new GatewayError('CONNECTION_NOT_READY', 'the session thread stopped');
    a.close(gone);
    t.is(await t.throwsAsync(waiting), gone);
    t.is(await t.throwsAsync(a.call('never', [])), gone);
    a.note('never', []); // a note after close is dropped, not thrown
  } finally {
    close();
  }
});

test("daemonPreloads: the daemon's --import modules (argv and NODE_OPTIONS) as URLs, tsx left out, each once", (t) => {
  const cwd = '/srv/gw';
  t.deepEqual(daemonPreloads(['--import=./a.mjs', '--max-semi-space-size=32', '--import', '/opt/b.mjs', '--import=tsx'], '', cwd), ['file:///srv/gw/a.mjs', 'file:///opt/b.mjs']);
  t.deepEqual(daemonPreloads([], '--import=file:///x/p.mjs --import "/with space/q.mjs" --import=tsx/esm -r ./c.cjs', cwd), ['file:///x/p.mjs', 'file:///with%20space/q.mjs']);
  t.deepEqual(daemonPreloads(['--import=./a.mjs'], '--import=./a.mjs', cwd), ['file:///srv/gw/a.mjs'], 'once');
  t.deepEqual(daemonPreloads(['--import=some-package/register'], '', cwd), ['some-package/register'], 'a package name as it is');
  t.deepEqual(daemonPreloads([], '', cwd), []);
});
