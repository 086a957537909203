/**
 * Guards issue 24's definition of done, "docs/webhooks.md lists every new event": every event type
 * of src/domain/vocabulary.ts EVENT_TYPES has a row in the events table of docs/webhooks.md that
 * names each field of its data (the schema the webhooks carry, src/schemas/events.ts EVENT_DATA),
 * and the fields of the objects inside (a media's `kind`, a location's `latitude`, ...); no row
 * documents a type the gateway does not have. (openapi-account.test.ts only checks that a row
 * exists.) And docs/coverage.md, the audit of that definition of done, cites only tests that exist:
 * each `file`: “title” it names is a test of that title in test/<file>.test.ts.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { EVENT_DATA, EVENT_TYPES } from '../../src/schemas/events.js';

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
  items?: SchemaNode;
}

const doc = readFile(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');

/** The events table's row of each type: `| \`type\` | data |`. */
async function rows(): Promise<Map<string, string>> {
  const text = await doc;
  const table = text.slice(text.indexOf('## Events'), text.indexOf('## Headers and signature'));
  const out = new Map<string, string>();
  for (const line of table.split('\n')) {
    const m = /^\| `([a-z.]+)` \| (.*) \|$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** The objects a field's schema holds (through optional, union and array). */
function objectsIn(schema: SchemaNode): SchemaNode[] {
  if (schema.properties) return [schema];
  if (schema.anyOf) return schema.anyOf.flatMap(objectsIn);
  if (schema.items) return objectsIn(schema.items);
  return [];
}

/** Fields whose text applies to every event: a person is `{"jid", "phone"?}` (the paragraph after the table). */
async function sharedText(): Promise<string> {
  const text = await doc;
  return /A person in these events is[^\n]*\n[^\n]*/.exec(text)?.[0] ?? '';
}

test('each event type has a row in docs/webhooks.md, and no row names a type the gateway does not have', async (t) => {
  const documented = await rows();
  t.deepEqual(EVENT_TYPES.filter((type) => !documented.has(type)), []);
  t.deepEqual([...documented.keys()].filter((type) => !(EVENT_TYPES as readonly string[]).includes(type)), []);
});

test('each row names every data field of its event, and the fields of the objects in it', async (t) => {
  const documented = await rows();
  const shared = await sharedText();
  t.regex(shared, /"jid"/);
  const missing: string[] = [];
  for (const type of EVENT_TYPES) {
    let row = documented.get(type) ?? '';
    // message.sent says "the same data as `message.received`": that row documents its fields too.
    const same = /the same data as `([a-z.]+)`/.exec(row)?.[1];
    if (same) row += ` ${documented.get(same) ?? ''}`;
    const schema = EVENT_DATA[type] as unknown as SchemaNode;
    for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
      if (!row.includes(`\`${field}\``)) missing.push(`${type}: ${field}`);
      for (const inner of objectsIn(fieldSchema)) {
        for (const key of Object.keys(inner.properties ?? {})) {
          const word = new RegExp(`\\b${key}\\b`);
          if (!word.test(row) && !word.test(shared)) missing.push(`${type}: ${field}.${key}`);
        }
      }
    }
  }
  t.deepEqual(missing, []);
});

test('docs/coverage.md cites only test files and test titles that exist', async (t) => {
  const coverage = await readFile(new URL('../../docs/coverage.md', import.meta.url), 'utf8');
  const sources = new Map<string, string>();
  const wrong: string[] = [];
  let cited = 0;
  for (const ref of coverage.matchAll(/`((?:integration|e2e)\/[\w-]+)`/g)) {
    const file = new URL(`../${ref[1]!}.test.ts`, import.meta.url);
    if (!existsSync(file)) {
      wrong.push(`${ref[1]!}: no such test file`);
      continue;
    }
    if (!sources.has(ref[1]!)) sources.set(ref[1]!, (await readFile(file, 'utf8')).replace(/\\'/g, "'"));
    const source = sources.get(ref[1]!)!;
    // The titles that follow the file: `file`: “one”, “two”
    const titles = /^(?:: “[^”]+”)(?:, “[^”]+”)*/.exec(coverage.slice(ref.index + ref[0].length))?.[0] ?? '';
    for (const [, title] of titles.matchAll(/“([^”]+)”/g)) {
      cited += 1;
      const quoted = [`'${title!}'`, `"${title!}"`, `\`${title!}\``];
      if (!quoted.some((q) => new RegExp(`\\b(?:test|serial)(?:\\.\\w+)*\\(\\s*${q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).test(source))) {
        wrong.push(`${ref[1]!}: no test titled “${title!}”`);
      }
    }
  }
  t.deepEqual(wrong, []);
  t.true(cited >= 80, `only ${cited} titles cited`);
});
