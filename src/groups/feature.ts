import type { Feature } from '../features/feature.js';
import { groupRoutes, type GroupParts } from './routes.js';

export type { GroupParts };

/** Groups: create, settings, participants, invite links, pictures, join and leave (reading them is the sending feature's directory). */
export function groupsFeature(parts: GroupParts): Feature {
  return { name: 'groups', routes: groupRoutes(parts) };
}
