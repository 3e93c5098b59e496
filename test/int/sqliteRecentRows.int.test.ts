/**
 * The SQLite store serves its own subscription the rows it just wrote from memory (sqliteRecentRows.ts). What a
 * reader gets must be exactly what the file holds: the same events as a fresh connection reads, other processes'
 * rows in their place, and the stored original (not the retry) when an append repeats one that landed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import type { EventSubscription } from '../../src/events/eventStore';
import type { NewEvent, StoredEvent } from '../../src/events/types';
import { contractEvent, freshStream } from '../contract/eventStore.contract';
import { tempDir } from '../support/fixtures';

/** The first `count` events a subscription yields (from the log's start). */
async function take(subscription: EventSubscription, count: number): Promise<StoredEvent[]> {
  const seen: StoredEvent[] = [];
  for await (const event of subscription) {
    seen.push(event);
    if (seen.length === count) break;
  }
  await subscription.close();
  return seen;
}

const retiredAt = (event: StoredEvent) => (event.data as { retiredAt: string }).retiredAt;

/** The same event id as `original`, with other data: what a retry that decided again at another moment would carry. */
const retryOf = (original: NewEvent): NewEvent =>
  ({ ...original, data: { ...original.data, retiredAt: '2031-12-31T23:59:59.999Z' } }) as NewEvent;

describe('SqliteEventStore: its subscription is served what it just wrote, exactly as stored', () => {
  let dir: string;
  let file: string;
  const opened: SqliteEventStore[] = [];
  const open = () => {
    const store = SqliteEventStore.open(file);
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    dir = tempDir('mailbox-recent-rows-');
    file = path.join(dir, 'events.sqlite');
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the writer and a fresh connection read the same events, interleaved with another connection in position order', async () => {
    const a = open();
    const b = open();
    const stream = freshStream();
    await a.append(stream, [contractEvent('a0'), contractEvent('a1')], 'no_stream'); // positions 1, 2
    await b.append(freshStream(), [contractEvent('b0')], 'no_stream'); // 3, written by the other connection
    await a.append(stream, [contractEvent('a2')], 1n); // 4
    await Promise.all([
      a.append(freshStream(), [contractEvent('a3')], 'no_stream'),
      a.append(freshStream(), [contractEvent('a4')], 'any'),
    ]);

    const fromWriter = await take(a.subscribe(null), 6);
    const fromFile = await take(open().subscribe(null), 6);
    expect(fromWriter).toEqual(fromFile);
    expect(fromWriter.map((event) => event.position)).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
    expect(fromWriter.map((event) => (event.data as { identity: string }).identity)).toEqual([
      '@a0',
      '@a1',
      '@b0',
      '@a2',
      ...((fromWriter[4].data as { identity: string }).identity === '@a3' ? ['@a3', '@a4'] : ['@a4', '@a3']),
    ]);
    expect(fromWriter[3]).toMatchObject({ streamName: stream, revision: 2n });
  });

  it('a page holds what another connection wrote after this one, so a short page still means the end of the log', async () => {
    const a = open();
    const b = open();
    await a.append(freshStream(), [contractEvent('a0'), contractEvent('a1')], 'no_stream'); // 1, 2 (held in memory)
    await b.append(freshStream(), [contractEvent('b0')], 'no_stream'); // 3 (only in the file)
    const page = await a.readAll(null, 10);
    expect(page.map((event) => event.position)).toEqual([1n, 2n, 3n]);
    expect(page).toEqual(await open().readAll(null, 10));
    expect((await a.readAll(null, 2)).map((event) => event.position)).toEqual([1n, 2n]);
  });

  it('a subscription served our rows from memory goes on to what another connection wrote after them, in order', async () => {
    const a = open();
    const b = open();
    await a.append(freshStream(), [contractEvent('a0'), contractEvent('a1')], 'no_stream'); // 1, 2 (held in memory)
    await b.append(freshStream(), [contractEvent('b0'), contractEvent('b1')], 'no_stream'); // 3, 4 (only in the file)
    await b.append(freshStream(), [contractEvent('b2')], 'no_stream'); // 5
    const events = await take(a.subscribe(null), 5);
    expect(events.map((event) => event.position)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(events).toEqual(await take(open().subscribe(null), 5));
  });

  it('a live subscription gets what another connection writes after this one caught up: at the poll, or at its own next append, in order', async () => {
    const a = open();
    const b = open();
    await a.append(freshStream(), [contractEvent('a0')], 'no_stream'); // 1, served from memory
    const subscription = a.subscribe(null);
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).value.position).toBe(1n);
    // Caught up with its own rows: the other connection's row is found by the poll, with no append here to wake it.
    await b.append(freshStream(), [contractEvent('b0')], 'no_stream'); // 2
    expect((await iterator.next()).value.position).toBe(2n);
    // The other's row and then ours: ours leave a hole (3 is not held here), read from the file, in order.
    await b.append(freshStream(), [contractEvent('b1')], 'no_stream'); // 3
    await a.append(freshStream(), [contractEvent('a1')], 'no_stream'); // 4
    const next = [(await iterator.next()).value, (await iterator.next()).value] as StoredEvent[];
    expect(next.map((event) => [event.position, (event.data as { identity: string }).identity])).toEqual([
      [3n, '@b1'],
      [4n, '@a1'],
    ]);
    await subscription.close();
  });

  it('an append that repeats one another connection landed is read as the original, not as the retry', async () => {
    const a = open();
    const b = open();
    const original = contractEvent('sweep');
    const stream = freshStream();
    await b.append(stream, [original], 'no_stream'); // the other process's sweeper wrote it first
    const repeated = await a.append(stream, [retryOf(original)], 'any'); // this one's retry: same id, other data
    expect(repeated.position).toBe(1n);
    await a.append(freshStream(), [contractEvent('after')], 'no_stream');

    const events = await take(a.subscribe(null), 2);
    expect(retiredAt(events[0])).toBe('2025-01-01T00:00:00.000Z');
    expect(events).toEqual(await take(open().subscribe(null), 2));
  });

  it('a retry of this process own append is read as the original', async () => {
    const a = open();
    const original = contractEvent('mine');
    const stream = freshStream();
    await a.append(stream, [original], 'no_stream');
    await a.append(stream, [retryOf(original)], 'any');
    await a.append(freshStream(), [contractEvent('next')], 'no_stream');

    const events = await take(a.subscribe(null), 2);
    expect(retiredAt(events[0])).toBe('2025-01-01T00:00:00.000Z');
    expect(events.map((event) => event.position)).toEqual([1n, 2n]);
  });
});
