/**
 * /readyz reads the log head and the views' checkpoint side by side. An append and its apply can land between the
 * two reads, so the head read is older than the checkpoint: the lag then came out below zero, an answer that
 * claimed views ahead of the log. The head is read again after such a checkpoint (it only grows).
 */
import type { MailboxServices } from '../../../src/application/mailboxServices';
import { checkReadiness } from '../../../src/adapters/http/readiness';
import { LAG_COUNTED_UP_TO } from '../../../src/application/viewsLag';

/** `countEvents`: the log's count of events between two positions (by default positions number them, as in SQLite). */
function mailboxWith(
  heads: bigint[],
  checkpoint: bigint,
  countEvents = async (after: bigint | null, through: bigint, atMost: number) =>
    Math.min(Number(through - (after ?? 0n)), atMost),
): { mailbox: MailboxServices; headReads: () => number } {
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
    eventStore: { headPosition: async () => heads[Math.min(reads++, heads.length - 1)], countEvents },
    projections: { checkpoint: async () => checkpoint, backend: 'memory' },
    runner: { getStatus: () => status },
    commands: { writeFailure: () => null },
    wakeRecorder: { refusal: () => null },
    config: {},
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

describe('the lag counts events, not positions (EventStoreDB positions are byte offsets)', () => {
  // Three sends on EventStoreDB, about 800 positions apart: the views hold the first.
  const positions = [807n, 1614n, 2421n];
  const countEvents = async (after: bigint | null, through: bigint, atMost: number) =>
    Math.min(positions.filter((p) => p > (after ?? 0n) && p <= through).length, atMost);

  test('views two sends behind: lag 2 (it said 1614), ready', async () => {
    const { mailbox } = mailboxWith([2421n], 807n, countEvents);
    const readiness = await checkReadiness(mailbox);
    expect(readiness.checks.projections.lag).toBe(2);
    expect(readiness.checks.projections).not.toHaveProperty('lagAtLeast');
    expect(readiness).toMatchObject({ ready: true, status: 'ready' });
  });

  test('views a dozen sends behind (12 x 900 positions): still ready, lag 12 (it said 10800: not ready)', async () => {
    const { mailbox } = mailboxWith([12n * 900n], 0n, async (after, through) => Number((through - (after ?? 0n)) / 900n));
    const readiness = await checkReadiness(mailbox);
    expect(readiness.checks.projections.lag).toBe(12);
    expect(readiness).toMatchObject({ ready: true, status: 'ready' });
  });

  test('views more events behind than are counted: not ready, lag at least the count', async () => {
    const { mailbox } = mailboxWith([50_000_000n], 0n, async (_after, _through, atMost) => atMost);
    const readiness = await checkReadiness(mailbox);
    expect(readiness.checks.projections).toMatchObject({ ok: false, lag: LAG_COUNTED_UP_TO, lagAtLeast: true });
    expect(readiness).toMatchObject({ ready: false, status: 'not ready' });
  });
});
