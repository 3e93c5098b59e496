/** The projection store contract on the in-memory adapter (the embedded default). */
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { describeProjectionStoreContract, type ProjectionStoreFactory } from './projectionStore.contract';
import { describeTaskViewsContract } from './taskViews.contract';

const memory: ProjectionStoreFactory = async () => {
  const wakeBus = new InProcessWakeBus();
  const store = new MemoryProjectionStore(wakeBus);
  return { store, wakeBus, close: async () => Promise.all([store.close(), wakeBus.close()]).then(() => undefined) };
};

describeProjectionStoreContract('memory', memory);
describeTaskViewsContract('memory', memory);
