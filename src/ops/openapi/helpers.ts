import type { SchemaObject } from './types.js';

/** A `$ref` to a component schema. */
export const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` });

export const str = (description: string, extra: SchemaObject = {}): SchemaObject => ({ type: 'string', description, ...extra });

export const obj = (properties: Record<string, SchemaObject>, required: string[], description?: string): SchemaObject => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  required,
});

/** `"success": true` of every 2xx body. */
export const success: SchemaObject = { const: true };

export const E164_PATTERN = '^\\+[1-9][0-9]{6,14}$';
export const phone = (description: string): SchemaObject => str(description, { pattern: E164_PATTERN, examples: ['+15551234567'] });
export const isoTime = (description: string): SchemaObject => str(description, { format: 'date-time' });
