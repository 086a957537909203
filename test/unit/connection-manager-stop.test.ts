/**
 * Guards the clean stop (DESIGN.md part 1, "a clean stop"; issue 23 item 2, "a clean stop hands its
 * instances over"): a connection that was still being created when the daemon stopped (the first
 * one waits for Baileys to load) is stopped too and never starts, so no socket reconnects, forever,
 * inside a daemon that has stopped. Found as a test worker that never exited (CI: "Failed to exit"
 * in storage-migrate-cli): a WhatsApp connection kept retrying its proxy after `stopped`.
 */
import test from 'ava';
import pino from 'pino';
import { ConnectionManager } from '../../src/connection/manager.js';
import type { Connection, ConnectionFactory, ConnectionHooks } from '../../src/connection/types.js';
import type { InstanceRecord } from '../../src/schemas/instance.js';

/** Records what the manager asks of each connection; nothing else of a connection is used here. */
function recording(calls: string[]): ConnectionFactory {
  return (record: InstanceRecord, _hooks: ConnectionHooks) => {
    let status = 'disconnected';
    return {
      instanceId: record.id,
      get status() {
        return status;
      },
      qr: null,
      reason: null,
      start: () => {
        calls.push(`start ${record.id}`);
        status = 'connected';
      },
      stop: async () => {
        calls.push(`stop ${record.id}`);
        status = 'disconnected';
      },
    } as unknown as Connection;
  };
}

function manager(whatsappFactory: () => Promise<ConnectionFactory>, sandboxCalls: string[] = []): ConnectionManager {
  return new ConnectionManager({
    sandboxFactory: recording(sandboxCalls),
    whatsappFactory,
    hooksFor: () => ({}) as ConnectionHooks,
    logger: pino({ level: 'silent' }),
    pacing: { minIntervalMs: 0, jitterMs: 0, maxWaitMs: 0 },
    sendsPerMinute: 60,
    now: () => Date.now(),
    maxConcurrentConnects: 2,
  });
}

const record = (id: string, sandbox = false): InstanceRecord => ({ id, sandbox }) as unknown as InstanceRecord;

test('a connection still being created when the daemon stops is stopped, and never started', async (t) => {
  const calls: string[] = [];
  let loaded!: (f: ConnectionFactory) => void;
  const m = manager(() => new Promise((resolve) => (loaded = resolve)));
  const starting = m.startAll([record('inst_a'), record('inst_b'), record('inst_c')]);
  await new Promise((r) => setImmediate(r));

  const stopping = m.stopAll();
  loaded(recording(calls)); // Baileys finishes loading after the stop began
  await stopping;
  await starting;
  t.deepEqual(calls.sort(), ['stop inst_a', 'stop inst_b'], 'the two being created were stopped; none started; the third never created');
  t.is(m.size, 2);

  await m.start(record('inst_d', true));
  t.false(calls.includes('start inst_d'), 'nothing starts after the stop');
});

test('connections already running are stopped once each', async (t) => {
  const calls: string[] = [];
  const m = manager(async () => recording(calls));
  await m.startAll([record('inst_a'), record('inst_b')]);
  t.deepEqual(calls.sort(), ['start inst_a', 'start inst_b']);
  await m.stopAll();
  t.deepEqual(calls.sort(), ['start inst_a', 'start inst_b', 'stop inst_a', 'stop inst_b']);
});
