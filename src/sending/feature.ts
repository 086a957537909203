import type { Feature } from '../features/feature.js';
import { directoryRoutes } from './directory-routes.js';
import { sendingRoutes, type SendingParts } from './routes.js';

/** Sending every kind of message (each costs a credit), and the directory lookups (free). */
export function sendingFeature(parts: SendingParts): Feature {
  return { name: 'sending', routes: [...sendingRoutes(parts), ...directoryRoutes(parts)] };
}
