/**
 * Guards issue 24's definition of done, "docs/webhooks.md lists every new event": every event type
 * of src/domain/vocabulary.ts EVENT_TYPES has a row in the events table of docs/webhooks.md that
 * names each field of its data (the schema the webhooks carry, src/schemas/events.ts EVENT_DATA),
 * and the fields of the objects inside (a media's `kind`, a location's `latitude`, ...); no row
 * documents a type the gateway does not have. (openapi-account.test.ts only checks that a row
 * exists.)
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
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
