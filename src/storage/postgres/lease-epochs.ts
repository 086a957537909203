/**
 * The lease epoch this process holds for each instance (issue 23 item 2), as the PostgreSQL stores
 * stamp it on an instance's writes when the write is made: the fencing trigger (migration 011)
 * refuses one whose epoch is no longer the lease's, so a write held back while the lease left this
 * node and came back is not stored over what the other node wrote meanwhile.
 *
 * Unbound (one process on its own, tools, tests of one store): null, and the trigger checks owner
 * and expiry only. The cluster binds it to its leases once they exist.
 */
export class LeaseEpochs {
  private source: (instanceId: string) => number | null = () => null;

  bind(source: (instanceId: string) => number | null): void {
    this.source = source;
  }

  of(instanceId: string): number | null {
    return this.source(instanceId);
  }
}
