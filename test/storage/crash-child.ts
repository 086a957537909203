/** The child of crash.ts: opens the storage and runs one scenario until it is killed. */
import type { StorageEngine } from '../../src/storage/storage.js';
import { openAt } from './open.js';
import { SCENARIOS } from './scenarios.js';

const [engine, address, name, argsJson] = process.argv.slice(2) as [StorageEngine, string, string, string];
const scenario = SCENARIOS[name];
if (!scenario) throw new Error(`no scenario ${name}`);
const storage = await openAt(engine, address);
// Resolves once the line left this process (see Scenario's ack).
const ack = (value: unknown): Promise<void> => new Promise((resolve) => process.stdout.write(`ack ${JSON.stringify(value)}\n`, () => resolve()));
await scenario(storage, JSON.parse(argsJson) as unknown, ack);
await storage.close();
