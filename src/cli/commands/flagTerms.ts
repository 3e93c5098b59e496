/**
 * The server's refusals in the words of the command that sent the request. FILTER_NOT_APPLICABLE and VALIDATION_FAILED
 * name the API's fields (threadId, tags, box=outbox), which a CLI user never typed: `mailbox inbox --outbox --status
 * unread` was told "Filter 'status' does not apply to box=outbox; applicable filters for box=outbox: to, threadId,
 * tags, ...". They are told the command's flags instead (--thread, --tag, --outbox). One mapping per command, from the
 * API's field (or `box=<value>`) to its flag; a field the command has no flag for keeps its name. Only the message
 * changes: the envelope's details (--json) keep the API's names, which a script matches on.
 */
import { MailboxError } from '../../errors';
import { issuesMessage } from '../../commands/validation';

/**
 * A command's flags by the API field each sets ({ threadId: '--thread', tags: '--tag' }), and how it says a box
 * (`'box=outbox': 'with --outbox'`).
 */
export type FlagsByField = Readonly<Record<string, string>>;

/** The mapping of a command's table of [option, flag, API field] (readAll.ts' READ_ALL_FLAGS, inbox's). */
export const flagsOf = (table: ReadonlyArray<readonly [string, string, string]>): FlagsByField =>
  Object.fromEntries(table.map(([, flag, field]) => [field, flag]));

export function inFlagTerms(error: MailboxError, command: string, flags: FlagsByField): MailboxError {
  const { error: title, code, message: _message, ...details } = error.envelope;
  // tags.0: the first --tag, "--tag #1"
  const named = (field: string) => {
    const [root, index] = field.split(/\.(?=\d+$)/);
    const flag = flags[root];
    if (flag === undefined) return field;
    return index === undefined ? flag : `${flag} #${Number(index) + 1}`;
  };
  if (code === 'FILTER_NOT_APPLICABLE') {
    const { filter, box, applicable } = details as { filter: string; box: string; applicable: string[] };
    const where = flags[`box=${box}`] ?? `box=${box}`;
    return new MailboxError(
      code,
      title,
      `'${named(filter)}' does not apply ${where}; the options that do: ${applicable.map(named).join(', ')}.`,
      details,
    );
  }
  const issues = (details as { issues?: Array<{ field: string; message: string }> }).issues;
  if (code === 'VALIDATION_FAILED' && Array.isArray(issues) && issues.some(({ field }) => named(field) !== field)) {
    return new MailboxError(code, title, issuesMessage(`mailbox ${command}`, issues, named), details);
  }
  const field = (details as { field?: unknown }).field;
  if (typeof field === 'string' && named(field) !== field) {
    const message = inFlagWords(error.message, command, field, named(field));
    if (message !== error.message) return new MailboxError(code, title, message, details);
  }
  return error;
}

/**
 * A refusal of one field, in the command's words: the operation it names first (`list_messages:`) as the command
 * (`mailbox inbox:`), the field (`'from'`) as the flag (`'--from'`), and a value suggested as the query's
 * `from=@bob` as the flag's `--from @bob`. `mailbox inbox --from @Bob` with @bob registered was told "list_messages:
 * 'from' is @Bob, which is no agent ... Did you mean from=@bob?", a form the CLI does not take.
 */
function inFlagWords(message: string, command: string, field: string, flag: string): string {
  const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return message
    .replace(/^[a-z]+(?:_[a-z]+)+: /, `mailbox ${command}: `)
    .replaceAll(`'${field}'`, `'${flag}'`)
    .replace(new RegExp(`(?<![\\w-])${escaped}=`, 'g'), `${flag} `);
}

/**
 * The routes and MCP tools a server's message points to, as the commands that call them: a CLI user was told "GET /v1/agents
 * lists the registered ones" (`mailbox agent retire @nobody`), "An agent gets its token when an admin registers it (POST
 * /v1/agents)" (a wrong --token) or "list_agents (GET /v1/agents) lists the agents" (a send to an unknown agent).
 */
const ROUTES_AS_COMMANDS: ReadonlyArray<readonly [RegExp, (match: string, identity?: string) => string]> = [
  [/list_agents \(GET \/v1\/agents\)|GET \/v1\/agents(?![/\w])/g, () => '`mailbox agent list`'],
  [
    /POST \/v1\/agents\/(\{identity\}|@[\w-]+)\/token(?: or `mailbox agent token`)?/g,
    (_match, identity) => `\`mailbox agent token ${identity === '{identity}' ? '<identity>' : identity}\``,
  ],
  [/POST \/v1\/agents(?![/\w]| \{)/g, () => '`mailbox agent add`'],
  // The MCP tools and task routes a message id or task refusal points to (`mailbox read nope`, `task claim <message>`).
  [/\(list_messages' messageId, list_tasks' taskId\)/g, () => '(`mailbox inbox`, `mailbox task list`)'],
  [/add_message's task, e\.g\. \{"task": \{\}\}/g, () => "`mailbox send --task '{}'`"],
  [/list_tasks \(GET \/v1\/tasks\)/g, () => '`mailbox task list`'],
  [/read with get_message\b/g, () => 'read with `mailbox read <messageId>`'],
  [/\(get_task's history\[\]\.messageId or status\.message\.messageId\)/g, () => '(`mailbox task show` lists them)'],
  [
    /get_task \{"taskId": "<the entry's taskId>"\} \(GET \/v1\/tasks\/\{taskId\}\)/g,
    () => "`mailbox task show <the entry's taskId>`",
  ],
];

/** `message` with the routes and tools it names as the commands that call them (ROUTES_AS_COMMANDS). */
export const inCommandTerms = (message: string): string =>
  ROUTES_AS_COMMANDS.reduce((said, [route, command]) => said.replace(route, command), message);
