/**
 * Records the wakes a bus delivers per recipient. flush() waits until everything published before it has arrived:
 * pub/sub keeps order per channel, so once a marker published after an apply arrives, every wake before it has too.
 * One marker of each kind (a message wake, a task wake): on Redis Cluster each kind is published from its own node
 * (the recipient's hash tag, the global one), and order holds per publishing node only.
 * No jest globals: the benches import it as well.
 */
import type { MessageWakeEvent, TaskWakeEvent, WakeEvent } from '../../src/projections/viewChanges';
import type { WakeBus } from '../../src/projections/wakeBus';

export async function recordWakes(bus: WakeBus, identities: readonly string[], flushTimeoutMs = 5000) {
  const wakes: WakeEvent[] = [];
  const flushed = new Map<string, () => void>();
  const unsubscribes = await Promise.all(
    identities.map((identity) =>
      bus.subscribe(identity, (wake) => {
        if (wake.messageId.startsWith('flush-')) flushed.get(wake.messageId)?.();
        else wakes.push(wake);
      }),
    ),
  );
  let flushes = 0;
  const markers = (identity: string, messageId: string): WakeEvent[] => [
    {
      type: 'wake/message',
      messageId: `${messageId}-m`,
      from: '@x',
      to: identity,
      recipient: identity,
      subject: '',
      priority: 'normal',
      isBroadcast: false,
      unreadCount: 0,
      position: '0',
    },
    {
      type: 'wake/task',
      taskId: `${messageId}-t`,
      messageId: `${messageId}-t`,
      recipient: identity,
      by: '@x',
      event: 'TaskClaimed',
      state: 'Submitted',
      assignee: null,
      subject: '',
      priority: 'normal',
      position: '0',
    },
  ];
  return {
    wakes,
    /** The message wakes of one recipient. */
    of: (identity: string) =>
      wakes.filter((wake): wake is MessageWakeEvent => wake.type === 'wake/message' && wake.recipient === identity),
    /** The task wakes of one recipient. */
    tasksOf: (identity: string) =>
      wakes.filter((wake): wake is TaskWakeEvent => wake.type === 'wake/task' && wake.recipient === identity),
    async flush(): Promise<void> {
      await Promise.all(
        identities.flatMap((identity) => {
          const sent = markers(identity, `flush-${++flushes}`);
          const arrived = sent.map(
            (marker) =>
              new Promise<void>((resolve, reject) => {
                const timer = setTimeout(() => reject(new Error(`wake flush for ${identity} timed out`)), flushTimeoutMs);
                flushed.set(marker.messageId, () => {
                  clearTimeout(timer);
                  resolve();
                });
              }),
          );
          void bus.publish(sent);
          return arrived;
        }),
      );
    },
    stop: () => Promise.all(unsubscribes.map((unsubscribe) => unsubscribe())),
  };
}
