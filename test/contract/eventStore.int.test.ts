/** The event store contract against the in-process adapters; the EventStoreDB adapter runs it in its own suite. */
import fs from 'node:fs';
import path from 'node:path';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { openSqliteDatabase, type SqliteDriver } from '../../src/support/sqlite/sqliteDriver';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { SCHEMA } from '../../src/adapters/eventstore/sqliteStatements';
import { tempDir } from '../support/fixtures';
import { describeEventStoreContract } from './eventStore.contract';

describeEventStoreContract('MemoryEventStore', async () => {
  const store = new MemoryEventStore();
  return { store, cleanup: () => store.close() };
});

const sqlite = (driver?: SqliteDriver) => async () => {
  const dir = tempDir('mailbox-contract-');
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'), driver);
  return {
    store,
    cleanup: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
};

describeEventStoreContract('SqliteEventStore', sqlite());
// Where better-sqlite3 could not be compiled at install, the log is opened with libsql (support/sqlite/sqliteDriver.ts).
describeEventStoreContract('SqliteEventStore through libsql (no better-sqlite3)', sqlite('libsql'));

describe('SqliteEventStore log identity', () => {
  it('is stored in the file: the same after a reopen, another for another file', async () => {
    const dir = tempDir('mailbox-identity-');
    try {
      const file = path.join(dir, 'events.sqlite');
      const first = SqliteEventStore.open(file);
      const identity = await first.logIdentity();
      await first.close();
      const reopened = SqliteEventStore.open(file);
      expect(await reopened.logIdentity()).toBe(identity);
      await reopened.close();
      // A file written before identities existed (no meta table) gets one on open, and keeps it.
      const olderFile = path.join(dir, 'older.sqlite');
      const older = openSqliteDatabase(olderFile);
      older.exec(SCHEMA);
      older.close();
      const upgraded = SqliteEventStore.open(olderFile);
      const given = await upgraded.logIdentity();
      await upgraded.close();
      const again = SqliteEventStore.open(olderFile);
      expect(await again.logIdentity()).toBe(given);
      await again.close();
      expect(given).not.toBe(identity);
      const other = SqliteEventStore.open(path.join(dir, 'other.sqlite'));
      expect(await other.logIdentity()).not.toBe(identity);
      await other.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
