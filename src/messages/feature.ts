import type { ConnectionActions } from '../connection/types.js';
import type { DaemonMode, Feature } from '../features/feature.js';
import { actionRoutes } from './action-routes.js';
import { messageRoutes, type MessageReadParts } from './routes.js';
import { searchRoutes } from './search-routes.js';

/** What the messages feature is built from. */
export interface MessagesParts extends MessageReadParts {
  mode: DaemonMode;
  /** The live connection, for reactions, edits, deletes, read marks and presence. */
  sender: ConnectionActions;
  /** The chats a person took over (the chats list shows them). */
  openHandovers(instanceId: string): Promise<ReadonlySet<string>>;
}

/** Reading messages, their media and the history; what can be done to a message (react, edit, delete, read). */
export function messagesFeature(parts: MessagesParts): Feature {
  return {
    name: 'messages',
    routes: [...messageRoutes(parts, parts.openHandovers), ...actionRoutes(parts), ...searchRoutes(parts.messages)],
    start() {
      if (parts.mode === 'daemon') parts.messages.start();
    },
  };
}
