/**
 * Read-ahead while paging through the SQLite log: a page fetched ahead on the
 * sidecar connection is used only when it is exactly the page asked for and
 * complete; appends that land between pages are never missed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import type { StoredEvent } from '../../src/events/types';
import { contractEvent, freshStream } from '../contract/eventStore.contract';
import { tempDir } from '../support/fixtures';

const label = (event: StoredEvent) => (event.data as { identity: string }).identity;

async function appendMany(store: SqliteEventStore, prefix: string, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_unused, i) => store.append(freshStream(), [contractEvent(`${prefix}${i}`)], 'no_stream')),
  );
}

it('paging with read-ahead returns exactly the log, including appends made between pages', async () => {
  const dir = tempDir('mailbox-read-ahead-');
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  try {
    await appendMany(store, 'a', 1700);
    const seen: StoredEvent[] = [];
    let after: bigint | null = null;
    for (let page = 0; ; page++) {
      const events = await store.readAll(after, 500);
      seen.push(...events);
      if (events.length === 0) break;
      after = events[events.length - 1].position;
      // Appends land while a next page may already be fetched ahead: after the 2nd and the 4th page.
      if (page === 1 || page === 3) await appendMany(store, `b${page}-`, 150);
    }
    const direct = await store.readAll(null, 1_000_000);
    expect(direct).toHaveLength(2000);
    expect(seen.map((e) => e.position)).toEqual(direct.map((e) => e.position));
    expect(seen.map(label)).toEqual(direct.map(label));
    expect(seen).toEqual(direct); // same events, field for field
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('a page asked for with other bounds than the one read ahead is read afresh', async () => {
  const dir = tempDir('mailbox-read-ahead-');
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  try {
    await appendMany(store, 'c', 1200);
    const first = await store.readAll(null, 600); // full: the next 600 after it are fetched ahead
    const other = await store.readAll(first[99].position, 700); // different bounds
    const direct = await store.readAll(null, 1_000_000);
    expect(other.map((e) => e.position)).toEqual(direct.slice(100, 800).map((e) => e.position));
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
