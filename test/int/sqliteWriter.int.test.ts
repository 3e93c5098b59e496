/**
 * The SQLite event store's writer thread: its refusals come back as the
 * errors callers know (a ConcurrencyConflict with its stream and revisions,
 * the store's own message), a dead thread fails every append loudly and
 * writes nothing, and close() answers what was issued, then ends the thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { ConcurrencyConflict } from '../../src/errors';
import type { StoredEvent } from '../../src/events/types';
import { contractEvent, freshStream } from '../contract/eventStore.contract';
import { tempDir } from '../support/fixtures';

const identities = (events: readonly StoredEvent[]) => events.map((event) => (event.data as { identity: string }).identity);
/** The thread behind the store (private: this test is about it). */
const writerThread = (store: SqliteEventStore) => (store as unknown as { writer: { worker: Worker | null } }).writer.worker!;

describe('SqliteEventStore writer thread', () => {
  let dir: string;
  let file: string;
  let store: SqliteEventStore;

  beforeEach(() => {
    dir = tempDir('mailbox-writer-');
    file = path.join(dir, 'events.sqlite');
    store = SqliteEventStore.open(file);
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a store that is only read starts no writer thread', async () => {
    expect(await store.readAll(null, 10)).toEqual([]);
    expect((store as unknown as { writer: { worker: Worker | null } }).writer.worker).toBeNull();
  });

  it('a stale expectation is a ConcurrencyConflict naming the stream, the expected and the actual revision', async () => {
    const stream = freshStream();
    await store.append(stream, [contractEvent('r0'), contractEvent('r1')], 'no_stream');
    const head = await store.headPosition();
    const stale = store.append(stream, [contractEvent('late')], 0n);
    await expect(stale).rejects.toBeInstanceOf(ConcurrencyConflict);
    await expect(stale).rejects.toMatchObject({ streamName: stream, expected: '0', actual: '1' });
    await expect(store.append(stream, [contractEvent('again')], 'no_stream')).rejects.toMatchObject({
      streamName: stream,
      expected: 'no_stream',
      actual: '1',
    });
    await expect(store.append(freshStream(), [contractEvent('nothing')], 5n)).rejects.toMatchObject({
      expected: '5',
      actual: 'no_stream',
    });
    expect(await store.headPosition()).toBe(head);
    expect(identities(await store.readStream(stream))).toEqual(['@r0', '@r1']);
  });

  it("other refusals keep the store's message and write nothing", async () => {
    const event = contractEvent('shared');
    const [one, other, third] = [freshStream(), freshStream(), freshStream()];
    await store.append(one, [event], 'no_stream');
    const head = await store.headPosition();
    const refused = store.append(other, [event], 'no_stream');
    await expect(refused).rejects.toThrow(`Event id ${event.eventId} already exists in stream ${one}`);
    await expect(refused).rejects.not.toBeInstanceOf(ConcurrencyConflict);
    // Later in a batch, the id is refused by SQLite itself: its message and code come through.
    await expect(store.append(other, [contractEvent('before'), event], 'no_stream')).rejects.toMatchObject({
      message: 'UNIQUE constraint failed: events.event_id',
      code: 'SQLITE_CONSTRAINT_UNIQUE',
    });
    expect(await store.headPosition()).toBe(head);
    expect(await store.readStream(other)).toEqual([]);
    await expect(store.append(third, [contractEvent('after')], 'no_stream')).resolves.toMatchObject({
      nextExpectedRevision: 0n,
    });
  });

  it('a writer thread that died fails the appends it had and every later one, loudly; reads go on', async () => {
    const stream = freshStream();
    await store.append(stream, [contractEvent('kept')], 'no_stream');
    const head = await store.headPosition();
    const thread = writerThread(store);
    const exited = new Promise((resolve) => thread.once('exit', resolve));
    const pending = store.append(freshStream(), [contractEvent('lost')], 'no_stream');
    void thread.terminate();
    await exited;
    await expect(pending).rejects.toThrow(/SQLite writer thread exited/);
    await expect(store.append(freshStream(), [contractEvent('later')], 'no_stream')).rejects.toThrow(
      /SQLite writer thread exited/,
    );
    expect(await store.headPosition()).toBe(head);
    expect(identities(await store.readStream(stream))).toEqual(['@kept']);
  });

  it('close() answers the appends already issued, then ends the thread; later appends are refused', async () => {
    const streams = [freshStream(), freshStream(), freshStream()];
    await store.append(streams[0], [contractEvent('one')], 'no_stream'); // the thread starts with the first commit
    const rest = streams.slice(1).map((stream, i) => store.append(stream, [contractEvent(`more${i}`)], 'no_stream'));
    const thread = writerThread(store);
    await store.close();
    await expect(Promise.all(rest)).resolves.toHaveLength(2);
    expect(thread.threadId).toBe(-1); // the thread has exited
    await expect(store.append(freshStream(), [contractEvent('closed')], 'no_stream')).rejects.toThrow(/closed/);
    const reopened = SqliteEventStore.open(file);
    try {
      expect(identities(await reopened.readAll(null, 10))).toEqual(['@one', '@more0', '@more1']);
    } finally {
      await reopened.close();
    }
  });
});
