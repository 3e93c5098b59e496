/**
 * Records the wakes a bus delivers per recipient. flush() waits until everything published before it has arrived:
 * pub/sub keeps order per channel, so once a marker published after an apply arrives, every wake before it has too.
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
  const marker = (identity: string, messageId: string): WakeEvent => ({
    type: 'wake/message',
    messageId,
    from: '@x',
    to: identity,
    recipient: identity,
    subject: '',
    priority: 'normal',
    isBroadcast: false,
    unreadCount: 0,
    position: '0',
  });
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
        identities.map(
          (identity) =>
            new Promise<void>((resolve, reject) => {
              const messageId = `flush-${++flushes}`;
              const timer = setTimeout(() => reject(new Error(`wake flush for ${identity} timed out`)), flushTimeoutMs);
              flushed.set(messageId, () => {
                clearTimeout(timer);
                resolve();
              });
              void bus.publish([marker(identity, messageId)]);
            }),
        ),
      );
    },
    stop: () => Promise.all(unsubscribes.map((unsubscribe) => unsubscribe())),
  };
}
