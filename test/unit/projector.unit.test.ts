/** The projector is pure: one stored event -> its facts, nothing else (the rules are in readModel/evolve.ts). */
import type { MailboxEvent, StoredEvent } from '../../src/events/types';
import { changesATask, projectEvent, projectStored } from '../../src/projections/projector';
import { broadcastSent, directSent, PARENT_ID, readBy, registered, retired, T0, T2 } from './fixtures/domain';

let nextPosition = 1n;
function stored<E extends MailboxEvent>(event: E, at = T2): StoredEvent {
  const position = nextPosition++;
  return {
    ...event,
    eventId: `event-${position}`,
    streamName: 'mailbox-test',
    revision: 0n,
    position,
    metadata: { commandId: 'c', correlationId: 'c', causationId: 'c', actor: '@alice', at, schemaVersion: 1 },
  } as StoredEvent;
}

const entry = {
  messageId: PARENT_ID,
  from: '@alice',
  to: '@bob',
  subject: 'hello',
  priority: 'normal',
  threadId: PARENT_ID,
  tags: [],
  sentAt: T0,
};

/** The delivery ledger a send opens (whether a wake is due is the rules' to decide: readModel/ledgerRules.ts). */
const ledgerOpened = (recipients: string[], broadcastSender: string | null = null) => ({
  kind: 'ledgerOpened',
  messageId: PARENT_ID,
  sender: '@alice',
  threadId: PARENT_ID,
  sentAt: T0,
  recipients,
  wakeSuppressed: false,
  broadcastSender,
});

describe('projector', () => {
  it('AgentRegistered and AgentRetired update the agent list', () => {
    expect(projectEvent(stored(registered('@bob', 'auditor')))).toEqual([
      { kind: 'agentRegistered', identity: '@bob', role: 'auditor', registeredAt: T0 },
    ]);
    expect(projectEvent(stored(retired('@bob', T2)))).toEqual([{ kind: 'agentRetired', identity: '@bob', retiredAt: T2 }]);
  });

  it('a direct MessageSent records the message, the sender outbox and the recipient inbox (wakes not suppressed)', () => {
    const event = directSent('@alice', '@bob', { task: { state: 'Working' }, hasTask: true });
    expect(projectEvent(stored(event))).toEqual([
      { kind: 'messageRecorded', summary: { ...entry, inReplyTo: null, task: { state: 'Working' }, recipientCount: 1 } },
      { kind: 'outboxAdded', sender: '@alice', entry },
      ledgerOpened(['@bob']),
      { kind: 'inboxAdded', recipient: '@bob', entry, isBroadcast: false, wakeSuppressed: false },
      {
        kind: 'taskOpened',
        task: {
          taskId: PARENT_ID,
          threadId: PARENT_ID,
          sender: '@alice',
          to: '@bob',
          subject: 'hello',
          priority: 'normal',
          sentAt: T0,
          isBroadcast: false,
          audience: ['@bob'],
          state: 'Working', // as the envelope stated it
          assignee: '@bob', // a direct task is its recipient's from the send
          claimedAt: null,
          leaseExpiresAt: null,
          deadline: null,
          statusMessage: null,
          reason: null,
          updatedAt: T0,
          updatedBy: '@alice',
          artifactCount: 0,
          lapsedClaimant: null,
          outcomeUnseen: false,
        },
      },
    ]);
  });

  it('wakeSuppressed is carried to the inbox fact (the wake rule is readModel/wakes.ts), the message is still in the inbox', () => {
    const changes = projectEvent(stored(directSent('@alice', '@bob', { wakeSuppressed: true })));
    expect(changes.find((c) => c.kind === 'inboxAdded')).toEqual({
      kind: 'inboxAdded',
      recipient: '@bob',
      entry,
      isBroadcast: false,
      wakeSuppressed: true,
    });
  });

  it('a broadcast MessageSent goes to the outbox only; each BroadcastDelivered fills one inbox with one wake', () => {
    const [sent, toBob, toCarol] = broadcastSent('@alice', ['@bob', '@carol']);
    const broadcastEntry = { ...entry, to: 'AGENT:*' };
    expect(projectEvent(stored(sent))).toEqual([
      { kind: 'messageRecorded', summary: { ...broadcastEntry, inReplyTo: null, task: null, recipientCount: 2 } },
      { kind: 'outboxAdded', sender: '@alice', entry: broadcastEntry },
      ledgerOpened(['@bob', '@carol'], '@alice'),
    ]);
    expect(projectEvent(stored(toBob))).toEqual([
      { kind: 'inboxAdded', recipient: '@bob', entry: broadcastEntry, isBroadcast: true, wakeSuppressed: false },
    ]);
    expect(projectEvent(stored(toCarol))).toEqual([
      { kind: 'inboxAdded', recipient: '@carol', entry: broadcastEntry, isBroadcast: true, wakeSuppressed: false },
    ]);
  });

  it('a broadcast delivery to its own sender is still an inbox fact; a suppressed broadcast says so', () => {
    const [, toSelf] = broadcastSent('@alice', ['@alice']);
    expect(projectEvent(stored(toSelf))).toEqual([
      expect.objectContaining({ kind: 'inboxAdded', recipient: '@alice', wakeSuppressed: false }),
    ]);
    const [, quiet] = broadcastSent('@alice', ['@bob']);
    quiet.data.wakeSuppressed = true;
    expect(projectEvent(stored(quiet))).toEqual([expect.objectContaining({ recipient: '@bob', wakeSuppressed: true })]);
  });

  it('ReceiptRead and MessageArchived change only that recipient', () => {
    expect(projectEvent(stored(readBy('@bob', PARENT_ID, T2)))).toEqual([
      { kind: 'receiptRead', recipient: '@bob', messageId: PARENT_ID, readAt: T2, priority: 'normal' },
    ]);
    expect(
      projectEvent(
        stored({
          type: 'MessageArchived',
          data: {
            messageId: PARENT_ID,
            recipient: '@carol',
            archivedAt: T2,
            wasUnread: true,
            priority: 'high',
            sentAt: T0,
          },
        }),
      ),
    ).toEqual([{ kind: 'inboxArchived', recipient: '@carol', messageId: PARENT_ID, archivedAt: T2 }]);
  });

  it('projectStored carries the log position and the event time; same event, same changes; the event is untouched', () => {
    const event = stored(directSent('@alice', '@bob'), T2);
    const copy = structuredClone(event);
    const first = projectStored(event);
    expect(first.position).toBe(event.position);
    expect(first.at).toBe(T2);
    expect(projectStored(event)).toEqual(first);
    expect(event).toEqual(copy);
  });

  it('changesATask: a send with a task and every task event move a task (the sweeper looks again); nothing else does', () => {
    const taskEvent = (type: string, data: object) => stored({ type, data } as unknown as MailboxEvent);
    const moving = [
      stored(directSent('@alice', '@bob', { task: { state: 'Working' }, hasTask: true })),
      taskEvent('TaskClaimed', { taskId: PARENT_ID, claimant: '@carol', claimedAt: T2, leaseExpiresAt: T2 }),
      taskEvent('TaskStateChanged', { taskId: PARENT_ID, from: 'Working', to: 'Completed' }),
      taskEvent('TaskOutcomeSeen', { taskId: PARENT_ID, seenAt: T2 }),
    ];
    const still = [
      stored(registered('@carol')),
      stored(directSent('@alice', '@bob')),
      ...broadcastSent('@alice', ['@bob', '@carol']).map((event) => stored(event)),
      stored(readBy('@bob')),
      stored(retired('@carol', T2)),
    ];
    expect(moving.map((event) => changesATask(projectStored(event)))).toEqual([true, true, true, true]);
    expect(still.map((event) => changesATask(projectStored(event)))).toEqual(still.map(() => false));
  });

  it('an unknown event type is a loud error, never a silent skip', () => {
    expect(() => projectEvent({ ...stored(retired('@x')), type: 'Bogus' } as unknown as StoredEvent)).toThrow(/No projection/);
  });
});
