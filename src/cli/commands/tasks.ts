/** `mailbox task list | show | claim | move`: an agent's tasks, over the HTTP API. */
import { Option, type Command } from 'commander';
import { z } from 'zod';
import type { TaskPage } from '../../application/taskQueries';
import type { TaskResult } from '../../application/taskCommands';
import { action, clientFrom, print, printJson, printWarnings, withClientOptions, type ClientOptions } from './clientOptions';
import { listTasksSchema, MAX_LEASE_SECONDS } from '../../commands/tasks/taskSchemas';
import { checkLimitFlag } from './limitFlag';
import { formatTask } from './taskFormat';
import { parseInput } from '../../commands/validation';
import { fromDecimalText } from '../../support/decimalText';
import { wholeUnitsOf } from '../../commands/replyDeadline';
import { quoted } from '../../support/terminalText';
import { isMailboxError } from '../../errors';
import { artifactsOnlyOnCompletion, missingField } from '../../commands/tasks/taskErrors';
import type { TaskStateName } from '../../commands/tasks/taskState';

/** --lease in plain decimal digits (Number() sent --lease 0x10 as 16 and --lease abc as null), named as typed. */
const leaseTeaches = `takes a whole number of seconds from 1 to ${MAX_LEASE_SECONDS} (e.g. --lease 600)`;
const claimFlagsSchema = z.strictObject({
  '--lease': fromDecimalText(
    z
      .number({ error: leaseTeaches })
      .int({ error: leaseTeaches })
      .min(1, { error: leaseTeaches })
      .max(MAX_LEASE_SECONDS, { error: leaseTeaches }),
    { teaches: leaseTeaches, meant: (text) => wholeUnitsOf(text, 1000) }, // --lease 5m: did you mean 300?
  ).optional(),
});

const line = (t: TaskPage['tasks'][number]) =>
  `${t.taskId}  ${t.state.padEnd(13)} ${(t.assignee ?? '(unclaimed)').padEnd(16)} from ${t.sender}  ${quoted(t.subject)}` +
  (t.leaseExpiresAt ? `  lease to ${t.leaseExpiresAt}` : '');

const said = (r: TaskResult) =>
  `${r.taskId}: ${r.state}${r.assignee ? `, held by ${r.assignee}` : ''}${r.leaseExpiresAt ? ` (lease to ${r.leaseExpiresAt})` : ''}` +
  (r.events.length ? '' : ' (nothing changed)');

/**
 * The server's task errors say how to fix the JSON input ('add "note"'); here the input is flags, so the same error
 * (same code and details) says the flag. Any other error is passed on as it is.
 */
function inFlagForm(error: unknown): unknown {
  if (!isMailboxError(error) || error.code !== 'VALIDATION_FAILED') return error;
  const { field, to, issues, given } = error.envelope;
  if (issues !== undefined || typeof to !== 'string') return error; // a schema's refusal, not the transition's
  const state = to as TaskStateName;
  const instead = given === 'reason' || given === 'note' ? given : undefined;
  if (field === 'reason' || field === 'note') return missingField(field, state, `add --${field} <text>`, instead);
  if (field === 'artifacts') return artifactsOnlyOnCompletion(state, 'give --artifact when moving it to completed');
  return error;
}

/** The flags of task list and task move by the API field each sets, which their refusals name (flagTerms.ts). */
const TASK_LIST_FLAGS = { view: '--view', state: '--state', limit: '--limit', cursor: '--cursor' };
const TASK_MOVE_FLAGS = { taskId: '<taskId>', reason: '--reason', note: '--note', artifacts: '--artifact' };
/** The argument a refusal of the task id names: `mailbox task show: '<taskId>' must be a message id`. */
const TASK_ARGUMENT = { taskId: '<taskId>' };

export function registerTaskCommands(program: Command): void {
  const task = program.command('task').description('tasks carried by messages: list, show, claim, move');

  withClientOptions(task.command('list'))
    .description('your tasks, newest first')
    .addOption(new Option('--view <view>', 'assigned (default), claimable or sent').choices(['assigned', 'claimable', 'sent']))
    .option('--state <states>', 'only these states, comma-separated (e.g. Working,InputRequired)')
    .option('--limit <n>', 'page size (1-200, default 50)')
    .option('--cursor <cursor>', 'next page, from the previous output')
    .action(
      action(async (options: ClientOptions & Record<string, string | undefined>) => {
        checkLimitFlag(options.limit, listTasksSchema.shape.limit, 'mailbox task list');
        const query = Object.fromEntries(
          Object.entries({ view: options.view, state: options.state, limit: options.limit, cursor: options.cursor }).filter(
            ([, value]) => value !== undefined,
          ),
        );
        const page = await clientFrom(options).listTasks(query);
        if (options.json) return printJson(page);
        print(page.tasks.length ? page.tasks.map(line).join('\n') : '(no tasks)');
        if (page.nextCursor) print(`more: --cursor ${page.nextCursor}`);
      }, TASK_LIST_FLAGS),
    );

  withClientOptions(task.command('show <taskId>'))
    .description('one task: its state, holder, artifacts and history (--json: the A2A Task object)')
    .action(
      action(async (taskId: string, options: ClientOptions) => {
        const shown = await clientFrom(options).getTask(taskId);
        // Text unless --json, as every other client command: it printed the JSON either way, and --json changed nothing.
        if (options.json) return printJson(shown);
        print(formatTask(shown));
      }, TASK_ARGUMENT),
    );

  withClientOptions(task.command('claim <taskId>'))
    .description('claim a task sent to AGENT:* or to a list naming you (first claim wins); again to renew your lease')
    .option(
      '--lease <seconds>',
      'hold it for this many seconds unless renewed (default: no lease, yours until you finish it or move it back to Submitted)',
    )
    .action(
      action(async (taskId: string, options: ClientOptions & { lease?: string }) => {
        const { '--lease': leaseSeconds } = parseInput(claimFlagsSchema, { '--lease': options.lease }, 'mailbox task claim');
        const result = await clientFrom(options).claimTask({ taskId, ...(leaseSeconds !== undefined ? { leaseSeconds } : {}) });
        if (options.json) return printJson(result);
        print(said(result));
        printWarnings(result);
      }, TASK_ARGUMENT),
    );

  withClientOptions(task.command('move <taskId> <state>'))
    .description('move a task: Working, InputRequired, AuthRequired, Completed, Failed, Rejected, Canceled, Submitted (release)')
    .option('--reason <text>', 'why (Rejected, Failed)')
    .option('--note <text>', 'to the other party (InputRequired, AuthRequired; an answer)')
    .option('--artifact <text>', 'a text artifact (Completed)')
    .addHelpText('after', '\nExamples:\n  mailbox task move <id> working\n  mailbox task move <id> completed --artifact "LGTM"')
    .action(
      action(
        async (taskId: string, to: string, options: ClientOptions & { reason?: string; note?: string; artifact?: string }) => {
          const result = await clientFrom(options)
            .updateTask({
              taskId,
              to,
              ...(options.reason !== undefined ? { reason: options.reason } : {}),
              ...(options.note !== undefined ? { note: options.note } : {}),
              ...(options.artifact !== undefined ? { artifacts: [{ parts: [{ kind: 'text', text: options.artifact }] }] } : {}),
            })
            .catch((error: unknown) => {
              throw inFlagForm(error);
            });
          if (options.json) return printJson(result);
          print(said(result));
          printWarnings(result);
        },
        TASK_MOVE_FLAGS,
      ),
    );
}
