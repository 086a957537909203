import type { CreditStore } from './credits.js';
import type { CreatedInstance, CreateInstanceInput, InstanceStore } from './instances.js';

/** Creates an instance with its starting credits; the one path for the CLI and the API. */
export async function provisionInstance(
  instances: InstanceStore,
  credits: CreditStore,
  input: CreateInstanceInput,
  startingCredits: number,
): Promise<CreatedInstance> {
  return instances.create(input, async (id) => {
    if (startingCredits > 0) await credits.add(id, startingCredits);
  });
}
