/** The task routes as data, for the OpenAPI document (see routeSpecs.ts). */
import type { ErrorCode } from '../../errors';
import { claimTaskSchema, listTasksSchema, transitionTaskSchema } from '../../commands/tasks/taskSchemas';
import { a2aTaskSchema, taskPageSchema, taskResultSchema } from '../../application/taskResponseSchemas';
import type { RouteSpec } from './routeSpec';

const AUTH: ErrorCode[] = ['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED'];
const BODY: ErrorCode[] = ['UNKNOWN_FIELD', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE'];

export const TASK_ROUTE_SPECS: RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/tasks/{id}/claim',
    operationId: 'claimTask',
    summary:
      'Claim a task sent to AGENT:* or to a list naming you: the first claim wins; claiming again renews your lease. ' +
      'Body optional: {leaseSeconds}',
    tag: 'tasks',
    auth: 'agent',
    body: claimTaskSchema.omit({ taskId: true }),
    // taskRoutes.ts reads a claim without a body as {} (no lease): a client need not send one.
    bodyOptional: true,
    success: {
      status: 200,
      schema: taskResultSchema,
      description: '{taskId, state, assignee, claimedAt, leaseExpiresAt, events}',
    },
    errors: [
      ...AUTH,
      ...BODY,
      'TASK_NOT_FOUND',
      'NOT_IN_AUDIENCE',
      'TASK_ALREADY_CLAIMED',
      'INVALID_TRANSITION',
      'CONCURRENCY_CONFLICT',
    ],
  },
  {
    method: 'post',
    path: '/v1/tasks/{id}/transition',
    operationId: 'transitionTask',
    summary:
      'Move a task to another state. Assignee: Working, Rejected, InputRequired, AuthRequired, Completed, Failed, Submitted ' +
      '(release); sender: Canceled, or Working to answer InputRequired/AuthRequired (provide the input; a message of the ' +
      "sender's to the holder in the task's thread does it too). Anything else: 409 INVALID_TRANSITION " +
      'listing what you may do',
    tag: 'tasks',
    auth: 'agent',
    body: transitionTaskSchema.omit({ taskId: true }),
    success: {
      status: 200,
      schema: taskResultSchema,
      description: '{taskId, state, assignee, claimedAt, leaseExpiresAt, events}',
    },
    errors: [
      ...AUTH,
      ...BODY,
      'TASK_NOT_FOUND',
      'NOT_IN_AUDIENCE',
      'INVALID_TRANSITION',
      'LEASE_EXPIRED',
      'CONCURRENCY_CONFLICT',
    ],
  },
  {
    method: 'get',
    path: '/v1/tasks',
    operationId: 'listTasks',
    summary: 'Your tasks: view=assigned (you hold), claimable (you may claim) or sent; filter by state; cursor-paged',
    tag: 'tasks',
    auth: 'agent',
    query: listTasksSchema,
    success: { status: 200, schema: taskPageSchema, description: '{tasks: [...], nextCursor}' },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED', 'CURSOR_MISMATCH'],
  },
  {
    method: 'get',
    path: '/v1/tasks/{id}',
    operationId: 'getTask',
    summary:
      'One task as an A2A v1.0 Task object (status, artifacts, history) plus the mailbox fields (assignee, lease). ' +
      "Its sender's first read of a task that finished without it records the outcome as seen (TaskOutcomeSeen): it " +
      "stops counting in the sender's tasksWaiting",
    tag: 'tasks',
    auth: 'sender, audience or auditor',
    success: {
      status: 200,
      schema: a2aTaskSchema,
      description: 'an A2A Task: {id, contextId, status, artifacts, history, metadata, mailbox}',
    },
    errors: [...AUTH, 'VALIDATION_FAILED', 'TASK_NOT_FOUND'],
  },
];
