/**
 * Stored shapes of the task lifecycle events (issue 12). Each task lives in its
 * own stream (streams.ts: taskStream), keyed by the id of the message that
 * carried it, so that claims and transitions never contend with the message's
 * per-recipient receipts. The actor of every change is in the event metadata.
 * Each event names its task and is otherwise lean: the read model keeps the
 * task's parties (sender, audience) from the message that opened it.
 */
import { z } from 'zod';

const timestamp = z.string();
/** The A2A v1.0 task states, PascalCase as stored (storedShapes.ts re-exports them). */
export const TASK_STATES = [
  'Submitted',
  'Working',
  'InputRequired',
  'Completed',
  'Canceled',
  'Failed',
  'Rejected',
  'AuthRequired',
  'Unknown',
] as const;
const taskState = z.enum(TASK_STATES);

export const taskPartV1 = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('text'), text: z.string() }),
  z.strictObject({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()) }),
  z.strictObject({ kind: z.literal('file'), file: z.strictObject({ uri: z.string().min(1), mimeType: z.string().optional() }) }),
]);

/** An A2A artifact: the output of a completed task. */
export const taskArtifactV1 = z.strictObject({
  artifactId: z.string(),
  name: z.string().nullable(),
  parts: z.array(taskPartV1),
});

/** First claim of a broadcast task wins; `leaseExpiresAt` null: held until released or finished. */
const taskClaimedV1 = z.strictObject({
  taskId: z.string(),
  claimant: z.string(),
  claimedAt: timestamp,
  leaseExpiresAt: timestamp.nullable(),
});
const taskStateChangedV1 = z.strictObject({
  taskId: z.string(),
  from: taskState,
  to: taskState,
  reason: z.string().nullable(),
  /** The message to the other party (A2A status.message), e.g. the question of an InputRequired. */
  note: z.string().nullable(),
  changedAt: timestamp,
});
const taskArtifactAddedV1 = z.strictObject({ taskId: z.string(), artifact: taskArtifactV1, addedAt: timestamp });
/** The assignee touched the task: its lease runs on from now. */
const taskLeaseRenewedV1 = z.strictObject({
  taskId: z.string(),
  claimant: z.string(),
  leaseExpiresAt: timestamp,
  renewedAt: timestamp,
});
/** The claimant gave a broadcast task back to its audience: Submitted and claimable again. */
const taskReleasedV1 = z.strictObject({ taskId: z.string(), claimant: z.string(), from: taskState, releasedAt: timestamp });
/** The claimant's lease lapsed: the task went back to its audience (Submitted), the claimant recorded. */
const taskLeaseExpiredV1 = z.strictObject({
  taskId: z.string(),
  claimant: z.string(),
  from: taskState,
  leaseExpiresAt: timestamp,
  expiredAt: timestamp,
});
/** Past its expiresAt or budget.deadline before it finished: ended as Canceled with reason "expired". */
const taskExpiredV1 = z.strictObject({
  taskId: z.string(),
  from: taskState,
  to: z.literal('Canceled'),
  reason: z.literal('expired'),
  deadline: timestamp,
  expiredAt: timestamp,
});

/**
 * The sender read the outcome of a task that ended without it (completed, failed, rejected by the assignee, or
 * expired): the task stops waiting on the sender. Written once, when the sender first gets the finished task.
 */
const taskOutcomeSeenV1 = z.strictObject({ taskId: z.string(), sender: z.string(), state: taskState, seenAt: timestamp });

export const TASK_EVENT_DATA_V1 = {
  TaskClaimed: taskClaimedV1,
  TaskStateChanged: taskStateChangedV1,
  TaskArtifactAdded: taskArtifactAddedV1,
  TaskLeaseRenewed: taskLeaseRenewedV1,
  TaskReleased: taskReleasedV1,
  TaskLeaseExpired: taskLeaseExpiredV1,
  TaskExpired: taskExpiredV1,
  TaskOutcomeSeen: taskOutcomeSeenV1,
} as const;

/** What a message's task envelope opens with: its stated state, else Submitted. */
export const openingTaskState = (task: { state?: (typeof TASK_STATES)[number] }) => task.state ?? 'Submitted';

/** The earlier of the envelope's expiresAt and budget.deadline (ISO times with offsets, compared as instants), or null. */
export function taskDeadline(task: { expiresAt?: string; budget?: { deadline?: string } }): string | null {
  const times = [task.expiresAt, task.budget?.deadline].filter((t): t is string => t !== undefined);
  if (times.length === 0) return null;
  return times.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
}
