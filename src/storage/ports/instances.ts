import type { InstanceRecord, WebhookSettings } from '../../schemas/instance.js';

export interface CreateInstanceInput {
  name?: string;
  owner?: string;
  sandbox?: boolean;
  webhook?: WebhookSettings | null;
  /** Extra premium days on top of the trial, from `--premium-days`. */
  premiumDays?: number;
}

export interface CreatedInstance {
  record: InstanceRecord;
  apiKey: string;
  trialGranted: boolean;
}

/**
 * Instances and their keys. Reads are synchronous: every request checks its instance, so each
 * engine keeps the records in memory and tells `onChange` listeners what another writer changed
 * (another node, on a shared database). Writes resolve once they are durable.
 */
export interface InstanceRepository {
  /** Reads every record; a corrupt store throws STORE_CORRUPT and is left untouched. */
  load(): Promise<void>;
  /** An instance in service (one being deleted is not). */
  get(id: string): InstanceRecord | undefined;
  /** Also an instance whose deletion was interrupted. */
  getAny(id: string): InstanceRecord | undefined;
  /** Every instance in service, oldest first (ties by id). */
  list(): InstanceRecord[];
  /** Instances whose deletion was interrupted (a crash, a full disk): start-up finishes them. */
  deleting(): InstanceRecord[];
  readonly size: number;
  /** The record or NOT_FOUND. */
  require(id: string): InstanceRecord;
  /**
   * Creates an instance, granting the owner's one-time trial if this is their first real
   * (non-sandbox) instance. `beforeWrite` runs before the record is stored (its credits go first,
   * so a crash never leaves an instance without the credits it was created with).
   */
  create(input: CreateInstanceInput, beforeWrite?: (id: string) => Promise<void>): Promise<CreatedInstance>;
  /** Applies `fn` to one instance and stores it; unknown ids are NOT_FOUND. */
  modify(id: string, fn: (record: InstanceRecord) => void): Promise<InstanceRecord>;
  /** Takes an instance out of service: from now on it is unknown to every route. */
  markDeleting(id: string): Promise<InstanceRecord>;
  remove(id: string): Promise<InstanceRecord>;
  /**
   * Reads one record again from the shared store (several hosts: another node may have created it
   * a moment ago, before its announcement arrived here).
   */
  refresh?(id: string): Promise<void>;
  /** The owner's one-time trial length, when it is the gateway's shared setting (several hosts). */
  setTrialDays?(days: number): void;
  /** Called with the id of every record another writer changed (never for this process' own writes). */
  onChange(listener: (id: string) => void): () => void;
}
