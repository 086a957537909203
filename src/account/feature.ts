import type { Feature } from '../features/feature.js';
import type { SendService } from '../sending/send-service.js';
import type { MediaConfig } from '../sending/media-input.js';
import type { MessageRepository } from '../storage/ports/messages.js';
import { chatRoutes } from './chat-routes.js';
import { contactRoutes } from './contact-routes.js';
import { profileRoutes } from './profile-routes.js';
import { statusRoute } from './status-route.js';

/** What the account feature is built from. */
export interface AccountParts {
  /** The live connection (free actions) and the send service (status posts cost a credit). */
  sender: Pick<SendService, 'act' | 'send'>;
  /** Media limits and the address rules for media URLs (status posts). */
  config: MediaConfig;
  /** History: a chat the account deletes leaves it too. */
  messages: Pick<MessageRepository, 'removeChat'>;
}

/** What the account does besides messaging: contacts, block list, profile, chat settings, labels, status posts. */
export function accountFeature(parts: AccountParts): Feature {
  return { name: 'account', routes: [...contactRoutes(parts), ...profileRoutes(parts), ...chatRoutes(parts), statusRoute(parts)] };
}
