/**
 * /readyz reads the log head and the views' checkpoint side by side. An append and its apply can land between the
 * two reads, so the head read is older than the checkpoint: the lag then came out below zero, an answer that
 * claimed views ahead of the log. The head is read again after such a checkpoint (it only grows).
 */
import type { MailboxServices } from '../../../src/application/mailboxServices';
import { checkReadiness } from '../../../src/adapters/http/readiness';

function mailboxWith(heads: bigint[], checkpoint: bigint): { mailbox: MailboxServices; headReads: () => number } {
  let reads = 0;
  const status = {
    running: true,
    checkpoint: checkpoint.toString(),
    lastError: null,
    lastErrorAt: null,
    lastAppliedAt: null,
    lagging: null,
    retryingBy: null,
    logIdentity: 'log-1',
    views: 'own',
    viewsProblem: null,
    rebuildingLostViews: null,
    leadership: { role: 'alone' },
  };
  const mailbox = {
    eventStore: { headPosition: async () => heads[Math.min(reads++, heads.length - 1)] },
    projections: { checkpoint: async () => checkpoint, backend: 'memory' },
    runner: { getStatus: () => status },
    commands: { writeFailure: () => null },
  } as unknown as MailboxServices;
  return { mailbox, headReads: () => reads };
}

test('an append that lands between the two reads: the head is read again, the lag is 0, never -2', async () => {
  const { mailbox, headReads } = mailboxWith([5n, 7n], 7n);
  const readiness = await checkReadiness(mailbox);
  expect(headReads()).toBe(2);
  expect(readiness.checks.eventStore.head).toBe('7');
  expect(readiness.checks.projections.lag).toBe(0);
  expect(readiness).toMatchObject({ ready: true, status: 'ready' });
});

test('a head at or past the checkpoint is read once', async () => {
  const { mailbox, headReads } = mailboxWith([9n], 7n);
  const readiness = await checkReadiness(mailbox);
  expect(headReads()).toBe(1);
  expect(readiness.checks.projections.lag).toBe(2);
});

test('views truly ahead of the log (another log, or a log that lost events) still say so: the lag stays negative', async () => {
  const { mailbox, headReads } = mailboxWith([3n, 3n], 7n);
  const readiness = await checkReadiness(mailbox);
  expect(headReads()).toBe(2);
  expect(readiness.checks.projections.lag).toBe(-4);
});
