/**
 * The command handler remembers that appends are failing as UNAVAILABLE (a full disk): readiness reports it from
 * the first failure (its time kept while the failures go on) until an append lands again. A refused command is no
 * write failure.
 */
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { CommandHandler } from '../../src/application/commandHandler';
import { messageModel } from '../../src/application/mailboxCommands';
import { MailboxError, unavailable } from '../../src/errors';
import type { MessageEvent } from '../../src/events/types';

const metadataAt = (at: string) => ({
  commandId: `c-${at}`,
  correlationId: 'c',
  causationId: 'c',
  actor: { identity: '@b', role: 'agent' as const },
  at,
});
const read = (messageId: string, at: string) =>
  ({
    type: 'ReceiptRead',
    data: { messageId, reader: '@b', readAt: at, priority: 'low', sentAt: at },
  }) as unknown as MessageEvent;

class FillingStore extends MemoryEventStore {
  full = false;
  override append(...args: Parameters<MemoryEventStore['append']>) {
    if (this.full) return Promise.reject(unavailable('The event log', new Error('database or disk is full')));
    return super.append(...args);
  }
}

test('write failures: from the first UNAVAILABLE append until the next one lands; a refusal is none', async () => {
  const store = new FillingStore();
  const handler = new CommandHandler(store);
  await handler.handle('mailbox-message-m1', messageModel, metadataAt('2026-01-01T00:00:00.000Z'), () => [
    read('m1', '2026-01-01T00:00:00.000Z'),
  ]);
  expect(handler.writeFailure()).toBeNull();

  store.full = true;
  for (const [stream, at] of [
    ['mailbox-message-m2', '2026-01-01T00:00:01.000Z'],
    ['mailbox-message-m3', '2026-01-01T00:00:02.000Z'],
  ]) {
    await expect(handler.handle(stream, messageModel, metadataAt(at), () => [read(stream.slice(-2), at)])).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
  }
  expect(handler.writeFailure()).toEqual({
    message: 'The event log is unavailable; retry later (the request was not applied).',
    since: '2026-01-01T00:00:01.000Z', // the first failure's time, kept
  });
  expect(await store.headPosition()).toBe(1n); // nothing of them was written

  const refusal = new MailboxError('MESSAGE_NOT_FOUND', 'Not found', 'no such message');
  await expect(
    handler.handle('mailbox-message-m4', messageModel, metadataAt('2026-01-01T00:00:03.000Z'), () => refusal),
  ).rejects.toBe(refusal);
  expect(handler.writeFailure()?.since).toBe('2026-01-01T00:00:01.000Z'); // still failing; a refusal changes nothing

  store.full = false;
  await handler.handle('mailbox-message-m5', messageModel, metadataAt('2026-01-01T00:00:04.000Z'), () => [
    read('m5', '2026-01-01T00:00:04.000Z'),
  ]);
  expect(handler.writeFailure()).toBeNull();
  expect(await store.headPosition()).toBe(2n);
});
