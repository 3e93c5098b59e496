/**
 * SQLite group commit: appends issued in the same event-loop turn share one
 * transaction, yet each keeps its own outcome (savepoint per append) and is
 * answered only once the transaction is committed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { ConcurrencyConflict } from '../../src/errors';
import type { StoredEvent } from '../../src/events/types';
import { contractEvent, freshStream } from '../contract/eventStore.contract';
import { tempDir } from '../support/fixtures';

const identities = (events: readonly StoredEvent[]) => events.map((event) => (event.data as { identity: string }).identity);

describe('SqliteEventStore group commit', () => {
  let dir: string;
  let file: string;
  let store: SqliteEventStore;

  beforeEach(() => {
    dir = tempDir('mailbox-group-commit-');
    file = path.join(dir, 'events.sqlite');
    store = SqliteEventStore.open(file);
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a conflicting append in a group fails alone; the others land, in call order', async () => {
    const [a, b, c] = [freshStream(), freshStream(), freshStream()];
    await store.append(b, [contractEvent('b0')], 'no_stream');
    const head = await store.headPosition();
    const results = await Promise.allSettled([
      store.append(a, [contractEvent('a0'), contractEvent('a1')], 'no_stream'),
      store.append(b, [contractEvent('b-stale')], 'no_stream'), // b exists: conflict
      store.append(c, [contractEvent('c0')], 'no_stream'),
      store.append(b, [contractEvent('b1')], 0n),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyConflict);
    expect(identities(await store.readAll(head, 100))).toEqual(['@a0', '@a1', '@c0', '@b1']);
    expect(identities(await store.readStream(b))).toEqual(['@b0', '@b1']);
  });

  it('two new-stream appends to one stream in a group: the first wins, the second conflicts and writes nothing', async () => {
    const stream = freshStream();
    const results = await Promise.allSettled([
      store.append(stream, [contractEvent('first')], 'no_stream'),
      store.append(stream, [contractEvent('second'), contractEvent('second-2')], 'no_stream'),
    ]);
    expect(results[0].status).toBe('fulfilled');
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyConflict);
    expect(identities(await store.readStream(stream))).toEqual(['@first']);
  });

  it("a repeated append in the same group (same ids) returns the first one's result and writes one copy", async () => {
    const stream = freshStream();
    const events = [
      contractEvent('x', '6f1c1d2e-0000-4000-8000-000000000001'),
      contractEvent('y', '6f1c1d2e-0000-4000-8000-000000000002'),
    ];
    const [first, again] = await Promise.all([
      store.append(stream, events, 'no_stream'),
      store.append(stream, events, 'no_stream'),
    ]);
    expect(again).toEqual(first);
    expect(identities(await store.readStream(stream))).toEqual(['@x', '@y']);
  });

  it('a retried append whose expected revision is now stale still returns the original result', async () => {
    const stream = freshStream();
    const event = contractEvent('once');
    const first = await store.append(stream, [event], 'no_stream');
    await store.append(stream, [contractEvent('later')], 0n);
    await expect(store.append(stream, [event], 'no_stream')).resolves.toEqual(first);
    expect(identities(await store.readStream(stream))).toEqual(['@once', '@later']);
  });

  it('an event id already used in another stream is refused loudly and writes nothing', async () => {
    const event = contractEvent('shared');
    const [one, other] = [freshStream(), freshStream()];
    await store.append(one, [event], 'no_stream');
    const head = await store.headPosition();
    await expect(store.append(other, [event], 'no_stream')).rejects.toThrow(/already exists in stream/);
    expect(await store.headPosition()).toBe(head);
  });

  it('answers only after the commit: an acknowledged append is readable by another connection', async () => {
    const stream = freshStream();
    const appended = store.append(stream, [contractEvent('durable')], 'no_stream');
    const reader = SqliteEventStore.open(file);
    try {
      expect(await reader.readStream(stream)).toEqual([]); // queued, not yet committed
      await appended;
      expect(identities(await reader.readStream(stream))).toEqual(['@durable']);
    } finally {
      await reader.close();
    }
  });

  it('close() commits appends already issued instead of dropping them', async () => {
    const stream = freshStream();
    const appended = store.append(stream, [contractEvent('late')], 'no_stream');
    await store.close();
    await expect(appended).resolves.toMatchObject({ nextExpectedRevision: 0n });
    const reopened = SqliteEventStore.open(file);
    try {
      expect(identities(await reopened.readStream(stream))).toEqual(['@late']);
    } finally {
      await reopened.close();
    }
  });
});
