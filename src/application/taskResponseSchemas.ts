/** What the task surfaces answer, as zod schemas (OpenAPI and MCP outputSchema), held to the result types below. */
import { z } from 'zod';
import { PRIORITIES, TASK_STATES } from '../commands/messageFields';
import type { A2aTask } from './taskA2a';
import type { TaskResult } from './taskCommands';
import type { TaskPage } from './taskQueries';
import { fits, warningSchema, type Fits } from './responseSchemas';

const timestamp = z.string().describe('ISO 8601 time');
const state = z.enum(TASK_STATES).describe('canonical PascalCase state');
const taskEventType = z.enum([
  'TaskClaimed',
  'TaskStateChanged',
  'TaskArtifactAdded',
  'TaskLeaseRenewed',
  'TaskReleased',
  'TaskLeaseExpired',
  'TaskExpired',
  'TaskOutcomeSeen',
]);

export const taskResultSchema = z.object({
  taskId: z.uuid(),
  state,
  assignee: z.string().nullable().describe('who holds the task (null: unclaimed)'),
  claimedAt: timestamp.nullable(),
  leaseExpiresAt: timestamp
    .nullable()
    .describe(
      'when the holder loses the task unless it updates it or claims again; null when no lease runs (none was taken, ' +
        'or it is paused while the task waits on its sender: the answer renews it)',
    ),
  events: z.array(taskEventType).describe('the events this command wrote; [] when it changed nothing'),
  warnings: z.array(warningSchema).optional(),
});

const listedTask = z.object({
  taskId: z.uuid(),
  threadId: z.string(),
  sender: z.string(),
  to: z.union([z.string(), z.array(z.string())]).describe('@identity, AGENT:*, or the list of identities'),
  subject: z.string(),
  priority: z.enum(PRIORITIES),
  sentAt: timestamp,
  isBroadcast: z
    .boolean()
    .describe(
      'sent to AGENT:* (a broadcast). A list of identities is not a broadcast (false), though its task is open to them ' +
        'alike: the first claim wins',
    ),
  audienceSize: z.number().int(),
  state,
  assignee: z.string().nullable(),
  claimedAt: timestamp.nullable(),
  leaseExpiresAt: timestamp
    .nullable()
    .describe(
      'when the holder loses the task unless it updates it or claims again; null when no lease runs (none was taken, ' +
        'or it is paused while the task waits on its sender: the answer renews it)',
    ),
  deadline: timestamp.nullable().describe('the earlier of expiresAt and budget.deadline'),
  statusMessage: z.string().nullable().describe('the last note or reason'),
  reason: z.string().nullable(),
  updatedAt: timestamp,
  updatedBy: z.string(),
  artifactCount: z.number().int(),
  lapsedClaimant: z
    .string()
    .nullable()
    .describe(
      'the last claimant whose lease lapsed, while that stands (its late update is refused LEASE_EXPIRED): null once it ' +
        'claims the task again or the task ends',
    ),
  outcomeUnseen: z
    .boolean()
    .describe(
      'it ended without its sender (completed, failed, rejected, expired) and the sender has not read it yet: it counts in ' +
        "the sender's tasksWaiting until the sender gets it (GET /v1/tasks/{id}, get_task)",
    ),
});

export const taskPageSchema = z.object({
  tasks: z.array(listedTask),
  nextCursor: z.string().nullable().describe('pass back as cursor, with the same view and state, for the next page'),
});

const a2aMessage = z.looseObject({ messageId: z.string(), role: z.string(), parts: z.array(z.looseObject({})) });

export const a2aTaskSchema = z.object({
  id: z.uuid(),
  contextId: z.string().describe('the thread'),
  status: z.object({
    state: z.string().describe('A2A v1.0 spelling, e.g. TASK_STATE_INPUT_REQUIRED'),
    message: a2aMessage.nullable(),
    timestamp,
  }),
  artifacts: z.array(z.looseObject({ artifactId: z.string(), parts: z.array(z.looseObject({})) })),
  history: z.array(a2aMessage),
  metadata: z.looseObject({}),
  mailbox: z
    .looseObject({ taskId: z.uuid(), state, assignee: z.string().nullable() })
    .describe('assignee, lease, deadline, audience size'),
});

void [
  fits<Fits<TaskResult, typeof taskResultSchema>>(),
  fits<Fits<TaskPage, typeof taskPageSchema>>(),
  fits<Fits<A2aTask, typeof a2aTaskSchema>>(),
];
