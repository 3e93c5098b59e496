/**
 * The projection runner on the memory stores: its queue is bounded (a stalled
 * store stops the subscription being pulled, then everything is applied once
 * released), and it serves only views of its own log.
 */
import pino from 'pino';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import type { EventSubscription } from '../../src/events/eventStore';
import type { LeaseStore } from '../../src/projections/projectorLease';
import { MAX_QUEUED, ProjectionRunner } from '../../src/projections/projectionRunner';
import { ForeignViews } from '../../src/projections/viewsOwnership';
import { unavailable } from '../../src/errors';
import { registrationEvent, silentLogger } from '../support/fixtures';
import { holdApplies } from '../support/heldApplies';
import { waitFor } from '../support/waitFor';

/** Counts what the runner pulls from its subscriptions. */
function countPulls(log: MemoryEventStore): { pulled: () => number } {
  let pulled = 0;
  const subscribe = log.subscribe.bind(log);
  log.subscribe = (after) => {
    const inner = subscribe(after);
    const counted: EventSubscription = {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) {
          pulled++;
          yield event;
        }
      },
    };
    return counted;
  };
  return { pulled: () => pulled };
}

/** A lease nobody else wants: the runner takes it at once (views shared by one node, as on Redis). */
const freeLease = (): LeaseStore => {
  let holder: { node: string; token: bigint } | null = null;
  return {
    name: 'projector',
    acquire: async (node) => (holder === null ? (holder = { node, token: 1n }).token : null),
    renew: async (node, token) => holder?.node === node && holder.token === token,
    release: async () => void (holder = null),
    holder: async () => holder,
  };
};

const turns = async (count: number) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('ProjectionRunner', () => {
  it('stops pulling the subscription while the store holds its applies, then applies everything once released', async () => {
    const log = new MemoryEventStore();
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const runner = new ProjectionRunner(log, views, silentLogger);
    const pulls = countPulls(log);
    await runner.start();
    const held = holdApplies(views);
    const total = 3 * MAX_QUEUED;
    const identities = Array.from({ length: total }, (_, i) => `@agent-${i}`);
    for (let i = 0; i < total; i += 500) {
      await log.append(
        'mailbox-agents',
        identities.slice(i, i + 500).map(registrationEvent),
        i === 0 ? 'no_stream' : BigInt(i - 1),
      );
    }
    // The positive signal: the pump has filled its queue.
    for (let i = 0; i < 1000 && pulls.pulled() < MAX_QUEUED; i++) await turns(1);
    expect(pulls.pulled()).toBeGreaterThanOrEqual(MAX_QUEUED);
    await turns(50);
    expect(pulls.pulled()).toBeLessThanOrEqual(MAX_QUEUED + 1000); // the queue plus the batch being applied, not the whole log
    expect(held.waiting).toBe(1);

    held.release();
    expect(await runner.waitFor(BigInt(total), 10_000)).toBe(true);
    expect((await views.listAgents()).map((agent) => agent.identity).sort()).toEqual([...identities].sort());
    expect(pulls.pulled()).toBe(total);
    await runner.stop();
  });

  it('claims empty views for its log, and refuses views claimed by another log without applying anything', async () => {
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const first = new MemoryEventStore();
    await first.append(
      'mailbox-agents',
      [registrationEvent('@ana'), registrationEvent('@bo'), registrationEvent('@cy')],
      'no_stream',
    );
    const owner = new ProjectionRunner(first, views, silentLogger);
    await owner.start();
    expect(owner.getStatus()).toMatchObject({ views: 'own', logIdentity: await first.logIdentity(), checkpoint: '3' });
    await owner.stop();

    const second = new MemoryEventStore();
    await second.append('mailbox-agents', [registrationEvent('@other')], 'no_stream');
    const intruder = new ProjectionRunner(second, views, silentLogger);
    const refused = await intruder.start().then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ForeignViews);
    expect((refused as Error).message).toContain(`another event log (${await first.logIdentity()})`);
    expect(intruder.getStatus()).toMatchObject({ views: 'foreign', running: false });
    expect((await views.listAgents()).map((agent) => agent.identity)).toEqual(['@ana', '@bo', '@cy']);
    expect((await views.binding()).logIdentity).toBe(await first.logIdentity());
  });

  it('reports a long catch-up as it goes, on its clock: events applied, position of the head, rate and time left', async () => {
    const log = new MemoryEventStore();
    const identities = Array.from({ length: 3_500 }, (_, i) => `@agent-${i}`);
    for (let i = 0; i < identities.length; i += 500) {
      await log.append(
        'mailbox-agents',
        identities.slice(i, i + 500).map(registrationEvent),
        i === 0 ? 'no_stream' : BigInt(i - 1),
      );
    }
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    let clockMs = Date.UTC(2025, 0, 1);
    const clock = { now: () => new Date((clockMs += 6_000)) }; // 6 s pass at each look: one page of 1,000 events every 6 s
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const runner = new ProjectionRunner(log, views, logger, clock);
    await runner.start();
    const reports = lines.filter((line) => String(line.msg).startsWith('projections catching up:'));
    expect(reports.map((line) => [line.events, line.position, line.head, line.percent])).toEqual([
      [2_000, '2000', '3500', 57],
      [3_500, '3500', '3500', 100],
    ]);
    expect(reports[0]).toMatchObject({ perSecond: 167, remainingSeconds: 9 }); // 2,000 events in 12 s; 1,500 left
    expect(reports[0].msg).toBe(
      'projections catching up: 2,000 events applied, at position 2000 of 3500 (57%), 167 events/s, about 9 s left',
    );
    expect(reports[1].msg).toBe(
      'projections catching up: 3,500 events applied, at position 3500 of 3500 (100%), 146 events/s, nearly done',
    );
    expect(lines.findIndex((line) => line.msg === 'projections caught up')).toBeGreaterThan(lines.indexOf(reports[1]));
    expect((await views.listAgents()).length).toBe(3_500);
    await runner.stop();
  });

  it('a catch-up that fails when this node takes the lease is logged and in lastError until a later batch lands', async () => {
    const log = new MemoryEventStore();
    await log.append('mailbox-agents', [registrationEvent('@ana'), registrationEvent('@bo')], 'no_stream');
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const earlier = new ProjectionRunner(log, views, silentLogger); // the previous projector left the views at the head
    await earlier.start();
    await earlier.stop();

    // The log fails the new leader's first read (its catch-up), then reads again: the follow loop finds nothing to apply.
    const readAll = log.readAll.bind(log);
    let failNextRead = true;
    log.readAll = async (after, limit) => {
      if (!failNextRead) return readAll(after, limit);
      failNextRead = false;
      throw new Error('the log was unreachable');
    };
    const lines: Array<{ level: number; msg: string; err?: { message: string } }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runner = new ProjectionRunner(log, views, logger);
    runner.useLease(freeLease(), 'node-a', 60_000);
    try {
      await runner.start();
      expect(runner.getStatus().leadership).toMatchObject({ role: 'leading', node: 'node-a' });
      const failure = lines.filter((line) => line.msg.startsWith('projection catch-up failed'));
      expect(failure).toEqual([
        expect.objectContaining({
          level: 50,
          msg: 'projection catch-up failed after taking the lease; resubscribing from checkpoint',
          err: expect.objectContaining({ message: 'the log was unreachable' }),
        }),
      ]);
      const failing = runner.getStatus();
      expect(failing).toMatchObject({ running: true, checkpoint: '2', lastError: 'the log was unreachable' });
      expect(Date.parse(failing.lastErrorAt!)).toBeGreaterThan(Date.now() - 60_000);

      await log.append('mailbox-agents', [registrationEvent('@cy')], 1n);
      expect(await runner.waitFor(3n)).toBe(true);
      await waitFor(() => runner.getStatus().lastError === null, { what: 'the failure cleared once a batch landed' });
      expect(runner.getStatus()).toMatchObject({ checkpoint: '3', lastError: null, lastErrorAt: null });
    } finally {
      await runner.stop();
    }
  });

  it('a views store that does not answer when this node takes the lease (a Redis failover) is the outage line, not an error with its stack', async () => {
    const log = new MemoryEventStore();
    await log.append('mailbox-agents', [registrationEvent('@ana'), registrationEvent('@bo')], 'no_stream');
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    // The promoted replica is not serving yet when the new leader's catch-up reads the checkpoint (seen: a Sentinel
    // failover under load, the node that took the lease back logged "projection catch-up failed ..." at error).
    const checkpoint = views.checkpoint.bind(views);
    let refusals = 1;
    views.checkpoint = async () => {
      if (refusals === 0) return checkpoint();
      refusals -= 1;
      throw unavailable('Redis projections', new Error('Connection is closed.'));
    };
    const lines: Array<{ level: number; msg: string; err?: unknown; retries?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runner = new ProjectionRunner(log, views, logger);
    runner.useResubscribeBackoff({ initialDelayMs: 1, maxDelayMs: 5, jitter: 0 });
    runner.useLease(freeLease(), 'node-a', 60_000);
    try {
      await runner.start();
      await log.append('mailbox-agents', [registrationEvent('@cy')], 1n);
      expect(await runner.waitFor(3n)).toBe(true);
      const told = lines.filter((line) => line.level >= 40 || line.msg.startsWith('projections: the views store'));
      expect(told).toEqual([
        expect.objectContaining({ level: 40, msg: expect.stringMatching(/^projections: the views store does not answer/) }),
        expect.objectContaining({ level: 30, msg: expect.stringMatching(/^projections: the views store answers again/) }),
      ]);
      expect(told[0].err).toBeUndefined();
      expect(runner.getStatus()).toMatchObject({ checkpoint: '3', lastError: null });
    } finally {
      await runner.stop();
    }
  });

  it('a views store that does not answer for a while (a Redis failover) is one warn line without a stack, and one when it answers again', async () => {
    const log = new MemoryEventStore();
    await log.append('mailbox-agents', [registrationEvent('@ana')], 'no_stream');
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const lines: Array<{ level: number; msg: string; err?: unknown; retries?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runner = new ProjectionRunner(log, views, logger);
    runner.useResubscribeBackoff({ initialDelayMs: 1, maxDelayMs: 5, jitter: 0 });
    try {
      await runner.start();
      // The store refuses as the Redis adapter does while Redis fails over: UNAVAILABLE, five times, then applies.
      let refusals = 5;
      const applyBatch = views.applyBatch.bind(views);
      views.applyBatch = async (...args) => {
        if (refusals === 0) return applyBatch(...args);
        refusals -= 1;
        throw unavailable('Redis projections (apply)', new Error('Command timed out'));
      };
      await log.append('mailbox-agents', [registrationEvent('@bo')], 0n);
      expect(await runner.waitFor(2n)).toBe(true);
      const told = lines.filter((line) => line.level >= 40 || line.msg.startsWith('projections: the views store'));
      expect(told).toEqual([
        expect.objectContaining({ level: 40, msg: expect.stringMatching(/^projections: the views store does not answer/) }),
        expect.objectContaining({
          level: 30,
          msg: expect.stringMatching(/^projections: the views store answers again/),
          retries: 5,
        }),
      ]);
      expect(told[0].err).toBeUndefined(); // no stack: an outage is no bug
    } finally {
      await runner.stop();
    }
  });

  it('a leader that steps down during the outage ends it with its own line; its follower reads say no "applying from the checkpoint" line', async () => {
    const log = new MemoryEventStore();
    await log.append('mailbox-agents', [registrationEvent('@ana')], 'no_stream');
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const lines: Array<{ level: number; msg: string; retries?: number; failingForMs?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    let now = Date.parse('2030-05-01T12:00:00.000Z');
    const runner = new ProjectionRunner(log, views, logger, { now: () => new Date(now) });
    runner.useResubscribeBackoff({ initialDelayMs: 1, maxDelayMs: 5, jitter: 0 });
    // The projector lease: this node's until another takes it, decided on the same injected clock.
    const lease = { holder: null as string | null };
    runner.useLease(
      {
        name: 'projector',
        acquire: async (node) => (lease.holder === null ? ((lease.holder = node), 1n) : null),
        renew: async (node) => lease.holder === node,
        release: async () => void (lease.holder = null),
        holder: async () => (lease.holder === null ? null : { node: lease.holder, token: 1n }),
      },
      'node-a',
      600_000,
      () => now,
    );
    try {
      await runner.start();
      expect(runner.getStatus().leadership).toMatchObject({ role: 'leading' });
      // The store refuses as the Redis adapter does while Redis fails over, each refusal a second after the last.
      let down = true;
      const refused: number[] = [];
      const applyBatch = views.applyBatch.bind(views);
      views.applyBatch = async (...args) => {
        if (!down) return applyBatch(...args);
        now += 1_000;
        refused.push(now);
        throw unavailable('Redis projections (apply)', new Error('Command timed out'));
      };
      await log.append('mailbox-agents', [registrationEvent('@bo')], 0n);
      await waitFor(() => refused.length >= 3, { what: 'three applies refused' });
      // Another node takes the lease: this one finds out at its next renewal, and steps down.
      lease.holder = 'node-b';
      now += 200_000; // a third of the lease: time to renew
      await waitFor(() => runner.getStatus().leadership?.role === 'following', { what: 'the step-down' });
      const failed = refused.length;
      // A minute later the views answer: this node, following, reads the shared checkpoint.
      now += 60_000;
      down = false;
      let reads = 0;
      const binding = views.binding.bind(views);
      views.binding = async () => (reads++, binding());
      await waitFor(() => reads >= 2, { what: 'two reads of the shared checkpoint (the first said what it says)' });
      expect(refused).toHaveLength(failed); // it applied nothing once it stepped down
      // It said 'projections: the views store answers again; applying from the checkpoint' at its first follower read:
      // it applies nothing, and downMs counted the time it did not lead.
      const told = lines.filter((line) => /^projections: the views store|^projector: stepped down/.test(line.msg));
      expect(told).toEqual([
        expect.objectContaining({ level: 40, msg: expect.stringMatching(/^projections: the views store does not answer/) }),
        expect.objectContaining({ level: 40, msg: expect.stringMatching(/^projector: stepped down/) }),
        expect.objectContaining({
          level: 30,
          msg: expect.stringMatching(/^projections: the views store had not answered when this node stepped down/),
          failingForMs: refused[failed - 1] - refused[0],
          retries: failed,
        }),
      ]);
    } finally {
      await runner.stop();
    }
  });

  it('its look at the views each second takes no apply that lands meanwhile for the views going back', async () => {
    const log = new MemoryEventStore();
    await log.append('mailbox-agents', [registrationEvent('@ana'), registrationEvent('@bo')], 'no_stream');
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runner = new ProjectionRunner(log, views, logger);
    await runner.start();
    const subscribe = log.subscribe.bind(log);
    let subscriptions = 0;
    log.subscribe = (after) => {
      subscriptions++;
      return subscribe(after);
    };
    // The look reads the views' binding, then the log's head: hold that read until an apply has landed.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let looking = false;
    const headPosition = log.headPosition.bind(log);
    log.headPosition = async () => {
      looking = true;
      await held;
      return headPosition();
    };
    let looked = false;
    views.markLiveWriter = async () => {
      looked = true; // the look's last wait: its comparison follows in the same turn
    };
    try {
      await waitFor(() => looking, { timeoutMs: 5000, what: 'the runner looking at its views' });
      await log.append('mailbox-agents', [registrationEvent('@cy')], 1n);
      expect(await runner.waitFor(3n, 5000)).toBe(true);
      release();
      await waitFor(() => looked, { what: 'the look at the views to finish' });
      await turns(5);
      // Read before the apply, the binding stood at 2 and the runner then at 3: the views did not go back.
      expect(lines.filter((line) => String(line.msg).includes('went back'))).toEqual([]);
      expect(runner.getStatus().checkpoint).toBe('3');
      expect(subscriptions).toBe(0); // the subscription was not ended to resume from the stored checkpoint
      expect((await views.binding()).checkpoint).toBe(3n);
    } finally {
      release();
      await runner.stop();
    }
  });

  /** A log of @ana and @bo, views built from it (at its head, 2), and a projector lease node-b holds (token 7). */
  async function viewsOfTwoAgentsFollowed() {
    const log = new MemoryEventStore();
    await log.append('mailbox-agents', [registrationEvent('@ana'), registrationEvent('@bo')], 'no_stream');
    const views = new MemoryProjectionStore(new InProcessWakeBus());
    const leader = new ProjectionRunner(log, views, silentLogger);
    await leader.start(); // the views are this log's, at its head
    await leader.stop();
    const heldElsewhere: LeaseStore = {
      name: 'projector',
      acquire: async () => null,
      renew: async () => false,
      release: async () => undefined,
      holder: async () => ({ node: 'node-b', token: 7n }),
    };
    return { log, views, heldElsewhere };
  }

  it('a follower ends no wait on a shared checkpoint of another log (views taken over before it looked)', async () => {
    const { log, views, heldElsewhere } = await viewsOfTwoAgentsFollowed();
    const runner = new ProjectionRunner(log, views, silentLogger);
    runner.useLease(heldElsewhere, 'node-a', 60_000);
    try {
      await runner.start();
      expect(runner.getStatus().leadership).toMatchObject({ role: 'following' });
      // Another mailbox takes the views over: they now hold its log, far ahead of this one's positions.
      let looked = 0;
      const own = await views.binding();
      views.binding = async () => {
        looked++;
        return { ...own, logIdentity: 'another-log', checkpoint: 1000n };
      };
      views.checkpoint = async () => {
        looked++;
        return 1000n;
      };
      await log.append('mailbox-agents', [registrationEvent('@cy')], 1n);
      await waitFor(() => looked >= 2, { what: 'two looks at the taken-over views' });
      expect(await runner.waitFor(3n, 0)).toBe(false);
    } finally {
      await runner.stop();
    }
  });
  it('a follower that finds the views gone back says the leader rebuilds them, not itself, and answers no read until they are back', async () => {
    const { log, views, heldElsewhere } = await viewsOfTwoAgentsFollowed();
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runner = new ProjectionRunner(log, views, logger);
    runner.useLease(heldElsewhere, 'node-a', 60_000);
    try {
      await runner.start();
      expect(runner.getStatus().leadership).toMatchObject({ role: 'following', leader: 'node-b' });
      await waitFor(() => runner.getStatus().checkpoint === '2', { what: 'the follower reading the shared checkpoint' });
      // Redis restarted empty: the shared views hold nothing, their checkpoint is gone.
      const own = await views.binding();
      views.binding = async () => ({ ...own, checkpoint: null });
      views.checkpoint = async () => null;
      await waitFor(() => lines.some((line) => String(line.msg).includes('went back')), {
        timeoutMs: 5000,
        what: "the follower's look at the views",
      });
      const said = lines.filter((line) => String(line.msg).includes('went back'));
      expect(said).toEqual([
        expect.objectContaining({
          level: 40,
          leader: 'node-b',
          msg:
            'projection checkpoint went back (the views store lost its data?); node-b, which holds the projector lease, ' +
            'rebuilds the views from the log, not this node (it follows); until they are back at position 2, this node ' +
            'answers no read from them',
        }),
      ]);
      expect(runner.getStatus().leadership).toMatchObject({ role: 'following' }); // it did not take the rebuild on
      // What the line says of reads holds: the node serves no read until the leader's rebuild is back at 2.
      expect(runner.getStatus().viewsProblem).toMatch(/^The views are being rebuilt from the event log/);
      views.binding = async () => ({ ...own, checkpoint: 2n });
      views.checkpoint = async () => 2n;
      await waitFor(() => runner.getStatus().viewsProblem === null, { what: 'reads served again once the views are back' });
    } finally {
      await runner.stop();
    }
  });
});
