/**
 * What a send costs the event store, counted on the message's own stream: an ordinary send (no idempotency key: its
 * message id is new) claims its stream new without reading it, one append, on SQLite and on EventStoreDB (the in-repo
 * wire double) alike. A keyed send's id is the key's, used before if it is a repeat: on EventStoreDB a node that never
 * read that stream reads it (and its metadata, where a soft delete shows) before it writes, so a soft-deleted message
 * is refused, not undeleted (esdbMailbox.int.test.ts); SQLite deletes nothing, and its keyed send is one append as before.
 */
import pino from 'pino';
import { createMailbox, type Mailbox, type MailboxClient } from '../../src/mailbox';
import type { HeldLog } from '../../src/application/heldLog';
import { messageStream } from '../../src/events/streams';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';

const silent = pino({ level: 'silent' });
const input = { to: ['@b', '@c'], subject: 'hello', body: 'x' };

let closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

async function opened(eventStore: { eventStoreUrl: string } | { dataDir: string }): Promise<Mailbox> {
  const mailbox = await createMailbox({ ...eventStore, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silent });
  closers.push(() => mailbox.close());
  return mailbox;
}

/** The reads and appends a send made on its message's stream (and, on EventStoreDB, that stream's metadata stream). */
type Calls = { reads: number; appends: number };
/** An ordinary send (no key), or one with an idempotency key. */
const sent = (key?: string): Parameters<MailboxClient['send']>[0] =>
  key === undefined ? input : { ...input, idempotencyKey: key };

describe('EventStoreDB (wire double): calls on the message stream, on a node that never read it', () => {
  let double: EsdbDouble;
  beforeEach(async () => {
    double = await EsdbDouble.start();
    closers.push(() => double.close());
  });

  async function sendCounted(sender: MailboxClient, key?: string): Promise<Calls> {
    const from = double.log.streamCalls.length;
    const { messageId } = await sender.send(sent(key));
    const own = double.log.streamCalls
      .slice(from)
      .filter(({ stream }) => stream === messageStream(messageId) || stream === `$$${messageStream(messageId)}`);
    return {
      reads: own.filter(({ call }) => call === 'read').length,
      appends: own.filter(({ call }) => call === 'append').length,
    };
  }

  it('an ordinary send: one append, no read (as before); a keyed send: the stream and its metadata read, then one append', async () => {
    const url = `${double.url}&defaultDeadline=1500`;
    const first = await opened({ eventStoreUrl: url });
    const { '@a': a } = await registerAgents(first, ['@a', '@b', '@c']);
    const other = await opened({ eventStoreUrl: url }); // another node: holds no message stream
    const sender = await other.as(a.token);

    expect(await sendCounted(sender)).toEqual({ reads: 0, appends: 1 });
    expect(await sendCounted(sender, 'k-1')).toEqual({ reads: 2, appends: 1 });
    // The repeat on the node that wrote it: held in its cache, read only for what came since, nothing appended.
    expect(await sendCounted(sender, 'k-1')).toEqual({ reads: 1, appends: 0 });
  });
});

describe('SQLite (the embedded default): calls on the message stream, as before', () => {
  it('an ordinary send and a keyed send: one append each, no read', async () => {
    const mailbox = await opened({ dataDir: tempDir('send-store-calls') });
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const log = (mailbox.eventStore as HeldLog).log;
    const reads = jest.spyOn(log, 'readStream');
    const appends = jest.spyOn(log, 'append');
    const sendCounted = async (key?: string): Promise<Calls> => {
      reads.mockClear();
      appends.mockClear();
      const { messageId } = await a.send(sent(key));
      const own = (calls: unknown[][]) => calls.filter(([stream]) => stream === messageStream(messageId)).length;
      return { reads: own(reads.mock.calls), appends: own(appends.mock.calls) };
    };

    expect(await sendCounted()).toEqual({ reads: 0, appends: 1 });
    expect(await sendCounted('k-1')).toEqual({ reads: 0, appends: 1 });
  });
});
