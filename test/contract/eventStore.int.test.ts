/** The event store contract against the in-process adapters; the EventStoreDB adapter runs it in its own suite. */
import fs from 'node:fs';
import path from 'node:path';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { tempDir } from '../support/fixtures';
import { describeEventStoreContract } from './eventStore.contract';

describeEventStoreContract('MemoryEventStore', async () => {
  const store = new MemoryEventStore();
  return { store, cleanup: () => store.close() };
});

describeEventStoreContract('SqliteEventStore', async () => {
  const dir = tempDir('mailbox-contract-');
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  return {
    store,
    cleanup: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
