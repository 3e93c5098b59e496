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
  if (code === 'CURSOR_MISMATCH')
    return new MailboxError(code, title, cursorMismatchInCommandTerms(command, error.message), details);
  // A field inside a flag's JSON (send --task '{"x": 1}': 'task.x'), said as that flag's: `mailbox send --task: ...`.
  const within = withinFlag(error, command, flags);
  if (within !== undefined) return new MailboxError(code, title, within, details);
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
 * The field a refusal names inside a flag's JSON value (`task.x` for send --task '{"x": 1}'), as [the flag, the path
 * within its value]; undefined for a field that is not inside one (`tags.0` is --tag's first value, not inside it).
 */
function insideFlag(field: string, flags: FlagsByField): [flag: string, path: string] | undefined {
  const [, root, path] = /^([^.]+)\.(.+)$/.exec(field) ?? [];
  if (root === undefined || /^\d+$/.test(path) || flags[root] === undefined) return undefined;
  return [flags[root], path];
}

/**
 * A refusal of fields inside one flag's JSON value, said as the command and that flag: `mailbox send --task '{"x":1}'`
 * was told "add_message does not accept 'task.x'; allowed fields in 'task': state, ...", the MCP tool's and the API's
 * names for what the user typed as --task. Now "mailbox send --task: does not accept 'x'; allowed fields: state, ...",
 * and "mailbox send --task: 'expiresAt' must be ..." for a value refused there. Undefined when the fields refused are not
 * all inside the same flag.
 */
function withinFlag(error: MailboxError, command: string, flags: FlagsByField): string | undefined {
  const { code, message } = error;
  const details = error.envelope as { field?: unknown; fields?: unknown; issues?: Array<{ field: string; message: string }> };
  const fields =
    code === 'UNKNOWN_FIELD' && Array.isArray(details.fields)
      ? details.fields.map(String)
      : code === 'VALIDATION_FAILED' && Array.isArray(details.issues)
        ? details.issues.map((issue) => issue.field)
        : [];
  const inside = fields.map((field) => insideFlag(field, flags));
  const flag = inside[0]?.[0];
  if (flag === undefined || inside.some((at) => at?.[0] !== flag)) return undefined;
  const root = fields[0].split('.')[0];
  const said = `mailbox ${command} ${flag}`;
  if (code === 'VALIDATION_FAILED')
    return issuesMessage(said, details.issues!, (field) => insideFlag(field, flags)?.[1] ?? field);
  return message
    .replace(/^[a-z]+(?:_[a-z]+)+ /, `${said}: `)
    .replaceAll(` in '${root}':`, ':')
    .replaceAll(`'${root}.`, "'");
}

/**
 * A refused --cursor in the command's words. The server's said where the cursor came from and what to do in the API's
 * terms: "... (GET /v1/messages, list_messages): ... pass each nextCursor back unchanged with the same box and filters",
 * a listing and a field a CLI user never saw (`mailbox inbox` prints `more: --cursor ...`).
 */
function cursorMismatchInCommandTerms(command: string, message: string): string {
  const issuedBy = /came from a (message|task) listing \(/.exec(message)?.[1];
  const from =
    issuedBy === undefined
      ? "another listing (other flags, or another agent's) or was altered"
      : `\`${issuedBy === 'message' ? 'mailbox inbox' : 'mailbox task list'}\``;
  return (
    `mailbox ${command}: this --cursor came from ${from}: a cursor pages only the listing that printed it. Run ` +
    `\`mailbox ${command}\` again without --cursor, then give each "more: --cursor ..." it prints to the same command ` +
    'with the same flags.'
  );
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
  [/list_messages \{"box": "outbox"\}, GET \/v1\/messages\?box=outbox/g, () => '`mailbox inbox --outbox`'],
  // An empty --cursor (src/commands/pageCursor.ts): a CLI user is shown "more: --cursor ...", never nextCursor.
  [
    /pass each page's nextCursor back unchanged \(a null nextCursor: there is no further page\)/g,
    () => 'give each "more: --cursor ..." a page prints, unchanged',
  ],
  [/read with get_message\b/g, () => 'read with `mailbox read <messageId>`'],
  // TASK_ALREADY_CLAIMED (`mailbox task claim` of a held task): the wake that says it came back, as the CLI shows it.
  [
    /\(a wake\/task on GET \/v1\/wake: event TaskReleased or TaskLeaseExpired\)/g,
    () => '(`mailbox watch` prints a "task:" line: TaskReleased or TaskLeaseExpired)',
  ],
  [/\(get_task's history\[\]\.messageId or status\.message\.messageId\)/g, () => '(`mailbox task show` lists them)'],
  [
    /get_task \{"taskId": "<the entry's taskId>"\} \(GET \/v1\/tasks\/\{taskId\}\)/g,
    () => "`mailbox task show <the entry's taskId>`",
  ],
];

/** `message` with the routes and tools it names as the commands that call them (ROUTES_AS_COMMANDS). */
export const inCommandTerms = (message: string): string =>
  ROUTES_AS_COMMANDS.reduce((said, [route, command]) => said.replace(route, command), message);
