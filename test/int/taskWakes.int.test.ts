/**
 * Acceptance (issue 12): a task change wakes exactly the right party, after the
 * view shows the change. One row per transition: @alice sends (A), @bob holds
 * the task (B), @carol is another audience member (C). After each step a
 * marker message to all three is awaited (a positive signal: the bus keeps log
 * order per subscriber, so every wake of the step has arrived before it), then
 * the step's task wakes are compared with the table; each wake also records the
 * task's state the views showed when it arrived.
 */
import type { UpdateTaskRequest } from '../../src/libraryInputs';
import type { Mailbox } from '../../src/mailbox';
import type { WakeEvent } from '../../src/projections/viewChanges';
import type { Clock } from '../../src/application/runtime';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { registerAgents } from '../support/fixtures';
import { mailboxHarness, STORE_KINDS } from './coreHarness';

type Client = Awaited<ReturnType<typeof registerAgents>>[string];
type Party = '@alice' | '@bob' | '@carol';
const PARTIES: Party[] = ['@alice', '@bob', '@carol'];

interface Row {
  step: string;
  /** Brings a fresh broadcast task (sent by @alice to @bob and @carol) to where the step starts. */
  given: Array<(c: Record<string, Client>, taskId: string) => Promise<unknown>>;
  act: (c: Record<string, Client>, taskId: string) => Promise<unknown>;
  /** Who is woken, as `recipient:state` (the wake's state, which the views must show on its arrival). */
  woken: string[];
  /** Where the task is sent: `AGENT:*` unless said (a decline is a direct task's recipient's alone). */
  sentTo?: string;
}

const claim = (c: Record<string, Client>, id: string) => c['@bob'].claimTask(id);
const move =
  (who: Party, to: UpdateTaskRequest['to'], extra: object = {}) =>
  (c: Record<string, Client>, id: string) =>
    c[who].updateTask({ taskId: id, to, ...extra });
const accept = move('@bob', 'Working');
const ask = move('@bob', 'InputRequired', { note: 'which branch?' });
const askAuth = move('@bob', 'AuthRequired', { note: 'may I push?' });

const ROWS: Row[] = [
  { step: 'claim', given: [], act: claim, woken: ['@alice:Submitted'] },
  { step: 'accept (Submitted -> Working)', given: [claim], act: accept, woken: [] },
  { step: 'ask for input', given: [claim, accept], act: ask, woken: ['@alice:InputRequired'] },
  { step: 'ask for authorization', given: [claim, accept], act: askAuth, woken: ['@alice:AuthRequired'] },
  {
    step: 'input provided',
    given: [claim, accept, ask],
    act: move('@alice', 'Working', { note: 'main' }),
    woken: ['@bob:Working'],
  },
  {
    step: "input provided by the sender's reply to the task",
    given: [claim, accept, ask],
    act: (c, id) => c['@alice'].send({ to: '@bob', subject: 'main', body: 'use main', inReplyTo: id }),
    woken: ['@bob:Working'],
  },
  {
    step: "input provided by the sender's message to the holder in the thread (not a reply to the task)",
    given: [claim, accept, ask],
    act: (c, id) => c['@alice'].send({ to: '@bob', subject: 'main', body: 'use main', threadId: id }),
    woken: ['@bob:Working'],
  },
  {
    step: "the sender's message to someone else in the thread answers nothing",
    given: [claim, accept, ask],
    act: (c, id) => c['@alice'].send({ to: '@carol', subject: 'fyi', body: 'x', threadId: id }),
    woken: [],
  },
  { step: 'authorization given', given: [claim, accept, askAuth], act: move('@alice', 'Working'), woken: ['@bob:Working'] },
  { step: 'complete', given: [claim, accept], act: move('@bob', 'Completed'), woken: ['@alice:Completed'] },
  { step: 'fail', given: [claim, accept], act: move('@bob', 'Failed', { reason: 'no access' }), woken: ['@alice:Failed'] },
  {
    step: 'reject (a direct task)',
    sentTo: '@bob',
    given: [],
    act: move('@bob', 'Rejected', { reason: 'not mine' }),
    woken: ['@alice:Rejected'],
  },
  // The claimant of an AGENT:* task cannot decline it for the whole audience: refused, nothing written, nobody woken.
  {
    step: "an AGENT:* task's claimant declining (refused)",
    given: [claim],
    act: (c, id) =>
      expect(c['@bob'].updateTask({ taskId: id, to: 'Rejected', reason: 'not mine' })).rejects.toMatchObject({
        code: 'INVALID_TRANSITION',
      }),
    woken: [],
  },
  { step: 'cancel a held task', given: [claim, accept], act: move('@alice', 'Canceled'), woken: ['@bob:Canceled'] },
  { step: 'cancel an unclaimed task', given: [], act: move('@alice', 'Canceled'), woken: [] },
  // Back with its audience: whoever may claim it now learns so, and its sender (not the holder that released it).
  {
    step: 'release to the audience',
    given: [claim],
    act: move('@bob', 'Submitted'),
    woken: ['@alice:Submitted', '@carol:Submitted'],
  },
];

async function watch(mailbox: Mailbox) {
  const seen: Array<Promise<string>> = [];
  const markers = new Map<string, () => void>();
  const stops = await Promise.all(
    PARTIES.map((identity) =>
      mailbox.wakeBus.subscribe(identity, (wake: WakeEvent) => {
        if (wake.type === 'wake/task') {
          // What the views say when the wake arrives: the change must already be there.
          const label = `${wake.recipient}:${wake.state}`;
          seen.push(
            mailbox.projections
              .getTask(wake.taskId)
              .then((view) => (view?.state === wake.state ? label : `${label} (views: ${view?.state ?? 'absent'})`)),
          );
        } else if (wake.type === 'wake/message' && wake.subject.startsWith('marker'))
          markers.get(`${wake.recipient} ${wake.subject}`)?.();
      }),
    ),
  );
  return {
    /** Resolves once a marker sent after everything before it has reached all three parties. */
    async settle(sender: Client, n: number): Promise<string[]> {
      const arrived = PARTIES.map((p) => new Promise<void>((resolve) => markers.set(`${p} marker ${n}`, resolve)));
      for (const p of PARTIES) await sender.send({ to: p, subject: `marker ${n}`, body: 'x' });
      await Promise.all(arrived);
      return (await Promise.all(seen.splice(0))).sort();
    },
    stop: () => Promise.all(stops.map((stop) => stop())),
  };
}

describe('task wakes per transition (memory event store)', () => {
  const harness = mailboxHarness(STORE_KINDS[0]);

  it.each(ROWS)('$step wakes $woken', async ({ given, act, woken, sentTo = 'AGENT:*' }) => {
    const mailbox = await harness.open({ taskSweepMs: 0 });
    const c = await registerAgents(mailbox, ['@alice', '@bob', '@carol', '@dora']);
    const wakes = await watch(mailbox);
    try {
      const { messageId: taskId } = await c['@alice'].send({ to: sentTo, subject: 'a task', body: 'x', task: {} });
      for (const step of given) await step(c, taskId);
      await wakes.settle(c['@dora'], 1); // the set-up's wakes are not this row's
      await act(c, taskId);
      expect(await wakes.settle(c['@dora'], 2)).toEqual([...woken].sort());
    } finally {
      await wakes.stop();
    }
  });
});

describe('a task back with its audience wakes who may claim it (memory event store)', () => {
  const harness = mailboxHarness(STORE_KINDS[0]);
  const T0 = Date.parse('2030-05-01T12:00:00.000Z');

  async function heldByBob(leaseSeconds?: number) {
    let at = T0;
    const clock: Clock = { now: () => new Date(at) };
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const c = await registerAgents(mailbox, ['@alice', '@bob', '@carol', '@dora']);
    const wakes = await watch(mailbox);
    const { messageId: taskId } = await c['@alice'].send({ to: 'AGENT:*', subject: 'a task', body: 'x', task: {} });
    await c['@bob'].claimTask(taskId, leaseSeconds === undefined ? {} : { leaseSeconds });
    await wakes.settle(c['@dora'], 1); // the set-up's wakes are not the test's
    return { mailbox, c, taskId, wakes, advance: (ms: number) => (at += ms) };
  }

  it('a lapsed lease, swept: its sender and the audience, the lapsed claimant too (it may claim again)', async () => {
    const { mailbox, c, wakes, advance } = await heldByBob(30);
    try {
      advance(31_000);
      expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 1 });
      expect(await wakes.settle(c['@dora'], 2)).toEqual(['@alice:Submitted', '@bob:Submitted', '@carol:Submitted']);
    } finally {
      await wakes.stop();
    }
  });

  it('a lapsed lease met by a claim before the sweep: the lapsed claimant learns it, the sender learns the claim', async () => {
    const { c, taskId, wakes, advance } = await heldByBob(30);
    try {
      advance(31_000);
      expect(await c['@carol'].claimTask(taskId)).toMatchObject({ events: ['TaskLeaseExpired', 'TaskClaimed'] });
      expect(await wakes.settle(c['@dora'], 2)).toEqual(['@alice:Submitted', '@bob:Submitted']);
    } finally {
      await wakes.stop();
    }
  });

  it('its holder retired: its sender and the rest of the audience, not the retired holder', async () => {
    const { mailbox, c, taskId, wakes } = await heldByBob();
    try {
      expect(await mailbox.asActor(ADMIN_ACTOR).retireAgent('@bob')).toMatchObject({ releasedTasks: [taskId] });
      expect(await wakes.settle(c['@dora'], 2)).toEqual(['@alice:Submitted', '@carol:Submitted']);
    } finally {
      await wakes.stop();
    }
  });
});
