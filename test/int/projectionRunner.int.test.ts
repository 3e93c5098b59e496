/**
 * The projection runner on the memory stores: its queue is bounded (a stalled
 * store stops the subscription being pulled, then everything is applied once
 * released), and it serves only views of its own log.
 */
import { randomUUID } from 'node:crypto';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import type { EventSubscription } from '../../src/events/eventStore';
import type { NewEvent } from '../../src/events/types';
import { MAX_QUEUED, ProjectionRunner } from '../../src/projections/projectionRunner';
import { ForeignViews } from '../../src/projections/viewsOwnership';
import { silentLogger } from '../support/fixtures';
import { holdApplies } from '../support/heldApplies';

const registration = (identity: string): NewEvent =>
  ({
    eventId: randomUUID(),
    type: 'AgentRegistered',
    data: { identity, role: 'agent', tokenHash: `hash-${identity}`, registeredAt: '2025-01-01T00:00:00.000Z' },
    metadata: {
      commandId: 'c',
      correlationId: 'c',
      causationId: 'c',
      actor: '@admin',
      at: '2025-01-01T00:00:00.000Z',
      schemaVersion: 1,
    },
  }) as NewEvent;

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
      await log.append('mailbox-agents', identities.slice(i, i + 500).map(registration), i === 0 ? 'no_stream' : BigInt(i - 1));
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
    await first.append('mailbox-agents', [registration('@ana'), registration('@bo'), registration('@cy')], 'no_stream');
    const owner = new ProjectionRunner(first, views, silentLogger);
    await owner.start();
    expect(owner.getStatus()).toMatchObject({ views: 'own', logIdentity: await first.logIdentity(), checkpoint: '3' });
    await owner.stop();

    const second = new MemoryEventStore();
    await second.append('mailbox-agents', [registration('@other')], 'no_stream');
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
});
