/**
 * The task tools (issue 12): the same commands, schemas and errors as the
 * HTTP task routes. Described so that a model calls them right the first
 * time: who may do what, and what each refusal means.
 */
import { claimTaskSchema, getTaskSchema, listTasksSchema, transitionTaskSchema } from '../../commands/tasks/taskSchemas';
import { parseInput } from '../../commands/validation';
import { a2aTaskSchema, taskPageSchema, taskResultSchema } from '../../application/taskResponseSchemas';
import { checkedArguments, type ToolDefinition } from './toolDefinition';

/** The artifacts as a model reads them (the server validates them strictly, as with the task envelope). */
const COMPACT_ARTIFACTS_SCHEMA = {
  type: ['array', 'string'], // the list, or the list JSON-encoded (transitionTaskSchema reads both)
  description:
    'Completed only: [{name?, parts: [{kind: "text", text} | {kind: "data", data: {}} | {kind: "file", file: {uri, mimeType?}}]}]',
  items: { type: 'object' },
};

export const TASK_TOOLS: ToolDefinition[] = [
  {
    name: 'claim_task',
    command: 'claim_task',
    description:
      'Claim a task sent to AGENT:* or to a list naming you: the first claim wins and the task is then yours alone. ' +
      'Later claims get TASK_ALREADY_CLAIMED (naming the holder). A direct task (to you alone) is already yours ' +
      '(claiming it changes nothing). Pass leaseSeconds to hold it only while you keep ' +
      'working: any update_task by you, or claiming again, renews the lease. After claiming, accept it with update_task to: Working.',
    schema: claimTaskSchema,
    output: taskResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (api, args) => api.claimTask(checkedArguments(claimTaskSchema, args, 'claim_task')),
  },
  {
    name: 'update_task',
    command: 'update_task',
    description:
      'Move a task to a new state. If you hold it: Working (accept), Rejected (decline a direct one; reason), ' +
      'InputRequired/AuthRequired (ask the sender; note), Completed (artifacts), Failed (reason), or Submitted to give ' +
      'back a task you claimed. If you sent it: Canceled, or Working (note) to answer its InputRequired/AuthRequired ' +
      "(this is provide_input: the note is the input; a message of yours to the holder in the task's thread answers it too). " +
      'Completed, Canceled, Failed, Rejected are final. A move you may not make is refused (INVALID_TRANSITION, ' +
      'listing the moves you may make); nothing changes.',
    schema: transitionTaskSchema,
    output: taskResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    propertySchemas: { artifacts: COMPACT_ARTIFACTS_SCHEMA },
    run: (api, args) => api.updateTask(checkedArguments(transitionTaskSchema, args, 'update_task')),
  },
  {
    name: 'list_tasks',
    description:
      'List your tasks, newest first: view assigned (you hold them; the default), claimable (AGENT:* or list tasks ' +
      'you may claim) or sent (tasks you sent); optionally only some states. In sent, outcomeUnseen: true ' +
      'marks a task that finished without you and waits on you (tasksWaiting) until you get_task it.',
    schema: listTasksSchema,
    output: taskPageSchema,
    // Like list_messages: a task returned to a recipient of its message marks that message seen (the delivery ledger).
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    encodedForm: 'comma-separated or JSON-encoded',
    run: (api, args) => api.listTasks(checkedArguments(listTasksSchema, args, 'list_tasks')),
  },
  {
    name: 'get_task',
    description:
      'Read one task as an A2A Task object: status (state, message, timestamp), artifacts, history, metadata, plus ' +
      'mailbox fields (assignee, lease, deadline). Its sender, audience and auditors may read it. When you sent it and it ' +
      'has finished, reading it records that you saw the outcome: it stops counting in your tasksWaiting.',
    schema: getTaskSchema,
    output: a2aTaskSchema,
    // Like list_messages' seen marks: the sender's first read of a finished task records TaskOutcomeSeen (once).
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    run: (api, args) => api.getTask(parseInput(getTaskSchema, args ?? {}, 'get_task').taskId),
  },
];
