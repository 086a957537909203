import Type from 'typebox';
import { OPERATOR_NAME_PATTERN } from '../domain/operator-name.js';
import { InstanceId, IsoTime, closed } from './common.js';

export const OperatorName = Type.String({ pattern: OPERATOR_NAME_PATTERN, description: 'The operator\'s name: 1 to 64 of letters, digits, ".", "_", "-" and "@".', examples: ['ann'] });
export const OperatorRoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('agent')], {
  description: '`admin` sees everything; `agent` sees only the inbox, chats and read-only status of its instances.',
});

export const CreateOperatorInput = closed({
  name: OperatorName,
  role: OperatorRoleSchema,
  instances: Type.Optional(Type.Array(InstanceId, { maxItems: 1000, uniqueItems: true, description: 'An agent\'s instances (not for an admin).' })),
});

export const OperatorView = closed({
  name: OperatorName,
  role: OperatorRoleSchema,
  instances: Type.Array(InstanceId),
  createdAt: IsoTime,
  passwordChangedAt: IsoTime,
});

export const OperatorListBody = closed({ success: Type.Literal(true), operators: Type.Array(OperatorView) });
export const OperatorWithPasswordBody = closed({
  success: Type.Literal(true),
  name: OperatorName,
  role: OperatorRoleSchema,
  instances: Type.Array(InstanceId),
  password: Type.String({ description: 'The one-time password, shown this once (stored only as a scrypt hash).' }),
  createdAt: IsoTime,
  passwordChangedAt: IsoTime,
});
export const OperatorDeletedBody = closed({ success: Type.Literal(true), name: OperatorName, deleted: Type.Literal(true) });
