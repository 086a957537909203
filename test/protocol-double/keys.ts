import { addTransactionCapability, type SignalDataTypeMap, type SignalKeyStore, type SignalKeyStoreWithTransaction } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { withSharedTransactionStorage } from '../../src/connection/baileys/shared-async-storage.js';

const silent = pino({ level: 'silent' });

/** A Baileys SignalKeyStore in memory (what a simulated device keeps: sessions, pre-keys, sender keys, LID mappings). */
export function memoryKeys(): SignalKeyStore {
  const data = new Map<string, unknown>();
  return {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const v = data.get(`${type}/${id}`);
        if (v !== undefined) out[id] = v as SignalDataTypeMap[T];
      }
      return out;
    },
    set: async (update) => {
      for (const [type, values] of Object.entries(update)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
        }
      }
    },
  };
}

/**
 * memoryKeys() with Baileys' transaction capability, as its Signal repository expects. Built with
 * the gateway's shared AsyncLocalStorage: Baileys makes one per store and never releases it, and a
 * double with a thousand accounts (a phone each) spent a tenth of its CPU stamping a thousand
 * storages onto every promise (see src/connection/baileys/shared-async-storage.ts).
 */
export function transactionalMemoryKeys(): SignalKeyStoreWithTransaction {
  return withSharedTransactionStorage(() => addTransactionCapability(memoryKeys(), silent, { maxCommitRetries: 1, delayBetweenTriesMs: 1 }));
}
