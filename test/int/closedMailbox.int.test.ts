/**
 * The library after mailbox.close(): every call rejects with a MailboxError (UNAVAILABLE, 503) whose envelope says
 * the mailbox was closed and that createMailbox opens it again, and writes nothing. Before, a call met whatever its
 * store said once shut ("The database connection is not open", "SQLite event store closed", no envelope) and
 * `as(token)` still resolved. On SQLite, so the log can be opened again to count what was written.
 */
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { MailboxError } from '../../src/errors';
import type { MailboxClient } from '../../src/mailbox';
import { ADMIN_TOKEN, allEvents, registerAgents } from '../support/fixtures';
import { mailboxHarness, rejectionOf, STORE_KINDS } from './coreHarness';

const harness = mailboxHarness(STORE_KINDS.find((kind) => kind.name === 'sqlite')!);

const expectClosed = async (call: () => Promise<unknown>) => {
  const error = await rejectionOf(call());
  expect(error).toBeInstanceOf(MailboxError);
  expect(error.status).toBe(503);
  expect(error.envelope).toEqual({
    error: 'Mailbox closed',
    code: 'UNAVAILABLE',
    message: expect.stringMatching(/closed.*createMailbox opens it again/),
  });
};

test('after close, every client method, as() and flushSeenMarks reject with the UNAVAILABLE envelope and write nothing', async () => {
  const mailbox = await harness.open();
  const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b']);
  const admin = await mailbox.as(ADMIN_TOKEN);
  const { messageId } = await a.send({ to: '@b', subject: 'review', body: 'x', task: {} });
  const written = (await allEvents(mailbox)).length;
  await mailbox.close();

  // Every method of a client, each called as a caller it would succeed for (the type lists them all).
  const calls: Record<Exclude<keyof MailboxClient, 'actor'>, () => Promise<unknown>> = {
    registerAgent: () => admin.registerAgent({ identity: '@c' }),
    retireAgent: () => admin.retireAgent('@b'),
    rotateToken: () => admin.rotateToken('@b'),
    send: () => a.send({ to: '@b', subject: 'again', body: 'x' }),
    sendOutcome: () => a.sendOutcome({ to: '@b', subject: 'again', body: 'x' }),
    markRead: () => b.markRead({ messageId }),
    archive: () => b.archive(messageId),
    unarchive: () => b.unarchive(messageId),
    listMessages: () => b.listMessages({ status: 'unread' }),
    getMessage: () => b.getMessage(messageId),
    delivery: () => a.delivery(messageId),
    unreadCount: () => b.unreadCount(),
    listAgents: () => a.listAgents(),
    heartbeats: () => b.heartbeats(),
    auditEvents: () => admin.auditEvents(),
    watch: () => b.watch(() => undefined),
    claimTask: () => b.claimTask(messageId),
    updateTask: () => b.updateTask({ taskId: messageId, to: 'Working' }),
    listTasks: () => b.listTasks({ view: 'assigned' }),
    getTask: () => a.getTask(messageId),
  };
  for (const call of Object.values(calls)) await expectClosed(call);
  await expectClosed(() => mailbox.as(ADMIN_TOKEN));
  await expectClosed(() => mailbox.asActor(ADMIN_ACTOR).listAgents());
  await expectClosed(() => mailbox.flushSeenMarks());
  await expect(mailbox.close()).resolves.toBeUndefined(); // closing again is not an error

  const reopened = await harness.open(); // the same SQLite file: what the refused calls wrote, if anything
  expect(await allEvents(reopened)).toHaveLength(written);
});
