import type { Core } from '../core/core.js';
import type { Feature } from '../core/feature.js';
import { messageRoutes } from './routes.js';

/** Reading messages, their media and the conversation history. */
export function messagesFeature(core: Core, openHandovers: (instanceId: string) => Promise<ReadonlySet<string>>): Feature {
  return {
    name: 'messages',
    routes: messageRoutes(core, openHandovers),
    start() {
      if (core.mode === 'daemon') core.messages.start();
    },
    removeInstance: (id) => core.messages.removeInstance(id),
    stop: () => core.messages.stop(),
  };
}
