import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { GatewayError, type ErrorCode } from '../domain/errors.js';
import { E164_PATTERN } from './common.js';

/**
 * Runtime checks of values against the same TypeBox schemas that give the TypeScript types and the
 * OpenAPI document: one definition of every shape. Validators are compiled once per schema.
 */
type Validator = ReturnType<typeof Compile>;
const compiled = new WeakMap<TSchema, Validator>();

function validatorOf(schema: TSchema): Validator {
  let v = compiled.get(schema);
  if (!v) {
    v = Compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

export function matches<T extends TSchema>(schema: T, value: unknown): value is Static<T> {
  return validatorOf(schema).Check(value);
}

/** One problem with a value, located by a readable path (`webhooks.retryDelaysMs[2]`). */
export interface Issue {
  path: string;
  code: ErrorCode;
  message: string;
}

interface RawError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

function readablePath(pointer: string): string {
  let out = '';
  for (const part of pointer.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(key) ? `[${key}]` : out === '' ? key : `.${key}`;
  }
  return out;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function describe(e: RawError): string {
  const p = e.params;
  switch (e.keyword) {
    case 'type':
      return `expected ${String(p.type) === 'integer' ? 'a whole number' : `a${/^[aeiou]/.test(String(p.type)) ? 'n' : ''} ${String(p.type)}`}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'minLength':
      return Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `must have at least ${String(p.limit)} items`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'maxProperties':
      return `must have at most ${String(p.limit)} entries`;
    case 'minProperties':
      return `must have at least ${String(p.limit)} entries`;
    case 'enum':
      return `expected one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `expected ${JSON.stringify(p.allowedValue)}`;
    case 'pattern':
      return p.pattern === E164_PATTERN ? 'must be E.164: "+" then 7 to 15 digits, the first not 0' : 'has the wrong format';
    case 'format':
      return `must be ${String(p.format)}`;
    case 'uniqueItems':
      return 'must not repeat items';
    default:
      return e.message;
  }
}

/** Whether the schema at `instancePath` ("/contacts/0/phone") is an E.164 phone. */
function isPhoneField(schema: TSchema, instancePath: string): boolean {
  let at: unknown = schema;
  for (const segment of instancePath.split('/').slice(1)) {
    const node = at as { properties?: Record<string, unknown>; items?: unknown } | undefined;
    if (!node) return false;
    at = /^[0-9]+$/.test(segment) && node.items !== undefined ? node.items : node.properties?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return (at as { pattern?: unknown } | undefined)?.pattern === E164_PATTERN;
}

/**
 * Every problem of `value` against `schema`, most useful first: missing fields, then bad phones,
 * then the rest; one issue per path (the union branches' noise is dropped).
 */
export function issues(schema: TSchema, value: unknown): Issue[] {
  const v = validatorOf(schema);
  if (v.Check(value)) return [];
  const raw = [...v.Errors(value)] as unknown as RawError[];
  const out: Issue[] = [];
  const seen = new Set<string>();
  const add = (issue: Issue): void => {
    if (seen.has(issue.path)) return;
    seen.add(issue.path);
    out.push(issue);
  };
  for (const e of raw) {
    const at = readablePath(e.instancePath);
    if (e.keyword === 'required') {
      for (const name of (e.params.requiredProperties as string[] | undefined) ?? []) add({ path: join(at, name), code: 'MISSING_FIELD', message: 'is required' });
    } else if (e.keyword === 'additionalProperties') {
      for (const name of (e.params.additionalProperties as string[] | undefined) ?? []) add({ path: join(at, name), code: 'INVALID_FIELD', message: 'unknown field' });
    } else if (e.keyword === 'boolean') {
      // "schema is false" from additionalProperties: reported above with its name.
    } else if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      add({ path: at, code: 'INVALID_FIELD', message: 'is not one of the allowed shapes' });
    } else if (e.keyword === 'pattern' && e.params.pattern === E164_PATTERN) {
      add({ path: at, code: 'INVALID_PHONE', message: describe(e) });
    } else if (e.keyword === 'type' && isPhoneField(schema, e.instancePath)) {
      // A phone given as a number (15551234567) is a bad phone, not some other field.
      add({ path: at, code: 'INVALID_PHONE', message: 'must be E.164: "+" then 7 to 15 digits, the first not 0' });
    } else {
      add({ path: at, code: 'INVALID_FIELD', message: describe(e) });
    }
  }
  // A union reports each branch's complaint for the same path before the anyOf summary; keep the summary only.
  const rank = (c: ErrorCode): number => (c === 'MISSING_FIELD' ? 0 : c === 'INVALID_PHONE' ? 1 : 2);
  return out.sort((a, b) => rank(a.code) - rank(b.code));
}

/** "`phone` is required" style text for one issue. */
export function issueText(issue: Issue): string {
  return `${issue.path === '' ? 'body' : issue.path} ${issue.message === 'is required' || issue.message.startsWith('is ') ? issue.message : `: ${issue.message}`}`.replace(' : ', ': ');
}

/**
 * Checks a request value and returns it typed, or throws the contract's 400: MISSING_FIELD,
 * INVALID_PHONE or INVALID_FIELD for the most useful issue (the message lists up to three).
 */
export function parseInput<T extends TSchema>(schema: T, value: unknown): Static<T> {
  // A body that is not a JSON object at all (an array, a string, a number) is not "a field".
  if ((schema as { type?: unknown }).type === 'object' && value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new GatewayError('INVALID_JSON', 'the body must be a JSON object');
  }
  const found = issues(schema, value);
  if (found.length === 0) return value as Static<T>;
  const first = found[0]!;
  const text = found.slice(0, 3).map(issueText).join('; ');
  throw new GatewayError(first.code, text);
}

/** Fills schema defaults into a copy of `value` (objects marked with a default are created). */
export function withDefaults<T extends TSchema>(schema: T, value: unknown): unknown {
  return Value.Default(schema, Value.Clone(value));
}
