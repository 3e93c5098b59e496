/**
 * whileOpen (the library's calls around mailbox.close()): a call already under way when close() began and
 * failing without an envelope (its store shut under it) is refused as a call after close is; an envelope
 * it failed with is its own answer and stays.
 */
import { mailboxClosed, whileOpen } from '../../src/application/whileOpen';
import { MailboxError } from '../../src/errors';

test('a call under way when close begins, failing with a driver error, rejects with the closed envelope, the error as its cause', async () => {
  const closing = new AbortController();
  const driverError = new TypeError('The database connection is not open');
  let fail!: (error: unknown) => void;
  const call = whileOpen(closing.signal, () => new Promise<never>((_resolve, reject) => (fail = reject)))();
  closing.abort();
  fail(driverError);
  const error = await call.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(MailboxError);
  expect((error as MailboxError).envelope).toEqual(mailboxClosed().envelope);
  expect((error as Error).cause).toBe(driverError);
});

test('an envelope stays what it was, open or closing; an open call failing without one is not called closed', async () => {
  const closing = new AbortController();
  const refused = new MailboxError('FORBIDDEN', 'Forbidden', 'no');
  await expect(whileOpen(closing.signal, () => Promise.reject(refused))()).rejects.toBe(refused);
  const bug = new Error('a bug');
  await expect(whileOpen(closing.signal, () => Promise.reject(bug))()).rejects.toBe(bug);
  closing.abort();
  let ran = false;
  await expect(whileOpen(closing.signal, async () => (ran = true))()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  expect(ran).toBe(false);
});
