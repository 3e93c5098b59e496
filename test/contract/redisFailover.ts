/**
 * A Redis master killed during a send load (Cluster or Sentinel), as a user of the mailbox sees it:
 * sends keep being acknowledged or refused (never lost once acknowledged); after the failover every
 * acknowledged message is in its recipients' inboxes, the views (counts included) equal a clean
 * rebuild of the log, and wakes come again.
 */
import { checkReadiness, type Readiness } from '../../src/adapters/http/readiness';
import type { Mailbox } from '../../src/mailbox';
import type { WakeStreamEvent } from '../../src/application/mailboxQueries';
import { allEvents, memoryMailbox, registerAgents } from '../support/fixtures';
import { waitFor } from '../support/waitFor';
import { listAll, snapshotViews } from './projectionStore.contract';
import { projectAll } from './projectionStoreLog';
import { openRedisHarness } from './redisHarness';

const RECIPIENTS = ['@b', '@c', '@d'];

export interface FailoverScenario {
  url: string;
  namespace: string;
  /** Kills the master that serves `agentTag` (a hash tag such as '{@b}'), calling `killed` once it is dead; resolves once a replica serves again. */
  killMaster(agentTag: string, killed: () => void): Promise<void>;
}

interface Sent {
  messageId: string;
  to: string;
}

/** Sends round-robin to @b, @c, @d until `stop()`; keeps what was acknowledged and counts what was refused. */
function sendLoad(sender: { send(input: object): Promise<{ messageId: string }> }) {
  const acknowledged: Sent[] = [];
  let refused = 0;
  let running = true;
  let attempt = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const loop = (async () => {
    while (running && attempt < 5000) {
      const to = RECIPIENTS[attempt++ % RECIPIENTS.length];
      try {
        const { messageId } = await sender.send({ to, subject: `load ${attempt}`, body: 'during a failover' });
        acknowledged.push({ messageId, to });
        for (const waiter of waiters.filter((w) => acknowledged.length >= w.count)) waiter.resolve();
      } catch {
        refused++; // 503 while Redis fails over: the sender would retry; nothing acknowledged is at stake
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  })();
  return {
    acknowledged,
    refused: () => refused,
    /** Resolves once `more` further sends were acknowledged. */
    more(more: number): Promise<void> {
      const count = acknowledged.length + more;
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Asks the node's readiness (what /readyz answers) every 50 ms from `start()` until `stop()`. */
function readinessPoll(mailbox: Mailbox) {
  const answers: Readiness[] = [];
  let polling = false;
  let loop: Promise<void> = Promise.resolve();
  return {
    answers,
    start() {
      polling = true;
      loop = (async () => {
        while (polling) {
          answers.push(await checkReadiness(mailbox));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
    },
    async stop() {
      polling = false;
      await loop;
    },
  };
}

/**
 * A scenario still running after SLOW_MS (the test's own timeout is 60 s) says where it is, once, on stderr: its
 * phase, the sends so far and the projector's status. A timeout alone said nothing (seen once in a full run, stop 34).
 */
const SLOW_MS = 45_000;
function reportIfSlow(mailbox: Mailbox, load: { acknowledged: readonly Sent[]; refused(): number }) {
  const started = Date.now();
  const report = {
    phase: 'sending before the failover',
    done: () => clearTimeout(timer),
  };
  const timer = setTimeout(() => {
    const status = JSON.stringify(mailbox.runner.getStatus());
    process.stderr.write(
      `failover scenario still running after ${Date.now() - started} ms, ${report.phase}: ` +
        `${load.acknowledged.length} sends acknowledged, ${load.refused()} refused; projector ${status}\n`,
    );
  }, SLOW_MS);
  timer.unref();
  return report;
}

export interface FailoverOutcome {
  acknowledged: number;
  refused: number;
  /** What /readyz would have answered from the kill until a replica served again. */
  readinessWhileDown: Readiness[];
}

export async function killMasterDuringSends(scenario: FailoverScenario): Promise<FailoverOutcome> {
  let mailbox: Mailbox | null = await memoryMailbox({ redisUrl: scenario.url, redisNamespace: scenario.namespace });
  try {
    const agents = await registerAgents(mailbox, ['@a', ...RECIPIENTS]);
    const load = sendLoad(agents['@a']);
    const slow = reportIfSlow(mailbox, load);
    await load.more(30);
    const readiness = readinessPoll(mailbox);
    slow.phase = 'the master killed, waiting for a replica to serve';
    await scenario.killMaster('{@b}', () => readiness.start());
    await readiness.stop();
    slow.phase = 'after the failover, waiting for 30 more acknowledged sends';
    await load.more(30); // acknowledged again after the failover
    await load.stop();
    slow.phase = 'checking the views and wakes';

    // The views first catch up with the log: a send acknowledged with VIEWS_LAGGING during the failover is applied
    // (and wakes its recipient) later, which must not be counted below as a wake for the message sent next.
    expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 20_000)).toBe(true);

    // Wakes come again: one for the next message to @b, through the wake stream a client holds.
    const wakes: WakeStreamEvent[] = [];
    const unsubscribe = await agents['@b'].watch((event) => wakes.push(event));
    const { messageId: last } = await agents['@a'].send({ to: '@b', subject: 'after the failover', body: 'wake me' });
    // Waited for by its own id: a late wake of a load message to @b (allowed, below) may come first, and ending the
    // wait on any wake then checked before this one had arrived (a clean clone's full run failed so once).
    const wokeFor = (messageId: string) =>
      wakes.some((event) => event.event === 'wake' && (event.data as { messageId: string }).messageId === messageId);
    await waitFor(() => wokeFor(last), { timeoutMs: 20_000, what: `the wake for ${last}` });
    // Exactly one wake for the new message. Around a failover wakes are at least once: a script whose reply was lost
    // with the old master is run again by the client on the new one (whose replica copy may lack its writes), and on
    // a Cluster a publish can reach the subscriber late; so a load message to @b may wake it again (seen on Node 22),
    // but nothing else may.
    const woke = wakes.filter((event) => event.event === 'wake').map((event) => event.data as { messageId: string });
    expect(woke.filter((wake) => wake.messageId === last)).toEqual([expect.objectContaining({ recipient: '@b' })]);
    const loadToB = new Set(load.acknowledged.filter((sent) => sent.to === '@b').map((sent) => sent.messageId));
    expect(woke.filter((wake) => wake.messageId !== last && !loadToB.has(wake.messageId))).toEqual([]);
    await unsubscribe();
    load.acknowledged.push({ messageId: last, to: '@b' });

    expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 20_000)).toBe(true);
    for (const identity of RECIPIENTS) {
      const inbox = new Set((await listAll(mailbox.projections, identity)).map((m) => m.messageId));
      const missing = load.acknowledged.filter((sent) => sent.to === identity && !inbox.has(sent.messageId));
      expect(missing).toEqual([]);
    }
    const clean = await openRedisHarness(scenario.url);
    try {
      await clean.store.applyBatch(projectAll(await allEvents(mailbox)));
      expect(await snapshotViews(mailbox.projections)).toEqual(await snapshotViews(clean.store));
    } finally {
      await clean.close();
    }
    expect(await checkReadiness(mailbox)).toMatchObject({ ready: true, status: 'ready' }); // and ready again
    const outcome = { acknowledged: load.acknowledged.length, refused: load.refused(), readinessWhileDown: readiness.answers };
    slow.done();
    await mailbox.projections.reset();
    await mailbox.close();
    mailbox = null;
    return outcome;
  } finally {
    await mailbox?.close();
  }
}
