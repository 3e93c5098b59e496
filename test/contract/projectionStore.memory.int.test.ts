/** The projection store contract on the in-memory adapter (the embedded default). */
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { describeProjectionStoreContract } from './projectionStore.contract';

describeProjectionStoreContract('memory', async () => {
  const wakeBus = new InProcessWakeBus();
  const store = new MemoryProjectionStore(wakeBus);
  return { store, wakeBus, close: async () => Promise.all([store.close(), wakeBus.close()]).then(() => undefined) };
});
