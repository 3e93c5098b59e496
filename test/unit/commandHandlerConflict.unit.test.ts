/**
 * A command whose every append meets a concurrency conflict (another writer always got there first) gives up after
 * its attempts: the caller gets 409 CONCURRENCY_CONFLICT saying none of its events was written and that retrying is
 * safe, and nothing of it is in the log; retried once the stream is quiet, it is applied once. The store double answers every append with a conflict, as a
 * stream written without pause by other nodes would.
 */
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { CommandHandler } from '../../src/application/commandHandler';
import { messageModel } from '../../src/application/mailboxCommands';
import { ConcurrencyConflict, MailboxError } from '../../src/errors';
import type { MessageEvent } from '../../src/events/types';

const metadataAt = (at: string, commandId: string) => ({
  commandId,
  correlationId: commandId,
  causationId: commandId,
  actor: { identity: '@b', role: 'agent' as const },
  at,
});
const read = (reader: string, at: string) =>
  ({
    type: 'ReceiptRead',
    data: { messageId: 'm1', reader, readAt: at, priority: 'low', sentAt: at },
  }) as unknown as MessageEvent;

/** Every append while `conflicting` is refused as if another writer had just appended to the stream. */
class ConflictingStore extends MemoryEventStore {
  conflicting = false;
  appends = 0;
  override append(...args: Parameters<MemoryEventStore['append']>) {
    if (!this.conflicting) return super.append(...args);
    this.appends++;
    const [stream, , expected] = args;
    return Promise.reject(new ConcurrencyConflict(stream, String(expected), `${String(expected)} + 1`));
  }
}

test('conflicts on every attempt: 409 CONCURRENCY_CONFLICT, safe to retry, nothing written', async () => {
  const store = new ConflictingStore();
  const handler = new CommandHandler(store);
  const stream = 'mailbox-message-m1';
  await handler.handle(stream, messageModel, metadataAt('2026-01-01T00:00:00.000Z', 'c-a'), () => [
    read('@a', '2026-01-01T00:00:00.000Z'),
  ]);
  const before = await store.headPosition();

  store.conflicting = true;
  const outcome = await handler
    .handle(stream, messageModel, metadataAt('2026-01-01T00:00:01.000Z', 'c-b'), () => [read('@b', '2026-01-01T00:00:01.000Z')])
    .then(
      () => null,
      (error: unknown) => error,
    );
  expect(outcome).toBeInstanceOf(MailboxError);
  const error = outcome as MailboxError;
  expect(error.status).toBe(409);
  expect(error.envelope).toEqual({
    error: 'Concurrency conflict',
    code: 'CONCURRENCY_CONFLICT',
    message:
      `Stream ${stream} kept changing while this request was decided: each of its 10 attempts found another write ` +
      'there first, and none of its events was written to it. Retrying is safe: the request is decided again on the ' +
      'stream as it is then.',
    stream,
  });
  expect(store.appends).toBe(10); // re-decided on fresh state each time, never appended blindly
  expect(handler.writeFailure()).toBeNull(); // a conflict is no failing store

  store.conflicting = false;
  expect(await store.headPosition()).toBe(before);
  const events = await store.readStream(stream);
  expect(events.map((event) => (event.data as { reader: string }).reader)).toEqual(['@a']);

  // Retried as is once the stream is quiet: applied once.
  await handler.handle(stream, messageModel, metadataAt('2026-01-01T00:00:02.000Z', 'c-b'), () => [
    read('@b', '2026-01-01T00:00:02.000Z'),
  ]);
  expect(await store.headPosition()).toBe(before! + 1n);
});
