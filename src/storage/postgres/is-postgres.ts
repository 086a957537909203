import type { Storage } from '../storage.js';
import type { PostgresStorage } from './index.js';

/** Whether the storage is the PostgreSQL engine (its cluster parts are then there). */
export function isPostgres(storage: Storage): storage is PostgresStorage {
  return storage.engine === 'postgres';
}
