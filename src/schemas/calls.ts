import Type from 'typebox';
import { ChatId, Phone, closed } from './common.js';

export const RejectCallBody = closed({ success: Type.Literal(true), instanceId: Type.String(), callId: Type.String(), rejected: Type.Literal(true) });

export const SubscribeInput = closed({ chatId: ChatId });
export const SubscribeBody = closed({ success: Type.Literal(true), instanceId: Type.String(), chatId: ChatId, phone: Type.Optional(Phone) });
