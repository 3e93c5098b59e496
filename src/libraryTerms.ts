/**
 * The library's refusals in its own terms. createMailbox's caller is told to catch a MailboxError and to read its
 * `code`; a refusal met while opening was mailbox serve's instead: a second createMailbox on a data dir another
 * process serves rejected with a ViewsFileInUse (a StartupError, no `code`, no envelope) telling it to "give this one
 * another MAILBOX_DATA_DIR", a log SQLite cannot read with an UnreadableLogFile, views of another log with a
 * StartupError, and an unreachable Redis with a MailboxError naming MAILBOX_REDIS_URL (its `field` too).
 */
import { inOptionTerms, optionOf } from './config';
import { isMailboxError, MailboxError } from './errors';
import { isStartupError } from './startupError';

/**
 * A refusal at open (after translateStartupError phrased serve's) as a MailboxError naming createMailbox's options:
 * a StartupError by its own title and code when it has them (an unreadable log: 'Event log unreadable',
 * UNAVAILABLE), else VALIDATION_FAILED when it names the option to change, else UNAVAILABLE; its `field` the option,
 * the StartupError kept as the cause. Anything else as it is.
 */
export function openRefusalInOptionTerms(error: unknown): unknown {
  if (isStartupError(error)) {
    const { variable, ...details } = error.details;
    const field = typeof variable === 'string' ? { field: optionOf(variable) } : {};
    const [code, title] = error.refusal
      ? [error.refusal.code, error.refusal.error]
      : variable !== undefined
        ? (['VALIDATION_FAILED', 'Invalid configuration'] as const)
        : (['UNAVAILABLE', 'Refused at open'] as const);
    return withCause(new MailboxError(code, title, inLibraryWords(error.message), { ...field, ...details }), error);
  }
  if (isMailboxError(error) && /\bMAILBOX_[A-Z_]+\b/.test(JSON.stringify(error.envelope))) {
    const { error: title, code, message, field, ...details } = error.envelope;
    const named = typeof field === 'string' ? { field: optionOf(field) } : field === undefined ? {} : { field };
    return withCause(new MailboxError(code, title, inLibraryWords(message), { ...named, ...details }), error);
  }
  return error;
}

/** A variable set to a value (`MAILBOX_PROJECTIONS_ON_FOREIGN=take-over`) as the option given it, then every variable. */
const inLibraryWords = (message: string): string =>
  inOptionTerms(
    message.replace(/\b(MAILBOX_[A-Z_]+)=([\w-]+)/g, (_, variable: string, value: string) => `${optionOf(variable)}: '${value}'`),
  );

function withCause(error: MailboxError, cause: unknown): MailboxError {
  (error as Error).cause = cause;
  return error;
}

/** Each MCP tool (and command name) by the library method that does the same. */
const METHOD_OF_TOOL: Readonly<Record<string, string>> = {
  add_message: 'send',
  get_message: 'getMessage',
  list_messages: 'listMessages',
  mark_read: 'markRead',
  archive_message: 'archive',
  unarchive_message: 'unarchive',
  get_delivery: 'delivery',
  unread_count: 'unreadCount',
  list_agents: 'listAgents',
  register_agent: 'registerAgent',
  retire_agent: 'retireAgent',
  rotate_agent_token: 'rotateToken',
  list_tasks: 'listTasks',
  get_task: 'getTask',
  claim_task: 'claimTask',
  update_task: 'updateTask',
};

/** A path parameter as a message writes it: {id}, {taskId}, {identity}, or the id or identity itself. */
const PARAM = String.raw`(?:\{\w+\}|[\w@.:-]+)`;

/** Each HTTP route a message points to, by the library method that does the same (the longest first). */
const METHOD_OF_ROUTE: ReadonlyArray<readonly [RegExp, string]> = [
  [new RegExp(String.raw`GET /v1/messages/${PARAM}/delivery`, 'g'), 'delivery'],
  [new RegExp(String.raw`GET /v1/messages/${PARAM}`, 'g'), 'getMessage'],
  [/GET \/v1\/messages\?box=outbox/g, "listMessages({ box: 'outbox' })"],
  [/GET \/v1\/messages(?![/\w?])/g, 'listMessages'],
  [/GET \/v1\/tasks\?view=claimable/g, "listTasks({ view: 'claimable' })"],
  [new RegExp(String.raw`POST /v1/tasks/${PARAM}/claim`, 'g'), 'claimTask'],
  [new RegExp(String.raw`POST /v1/tasks/${PARAM}/transition`, 'g'), 'updateTask'],
  [new RegExp(String.raw`GET /v1/tasks/${PARAM}`, 'g'), 'getTask'],
  [/GET \/v1\/tasks(?![/\w?])/g, 'listTasks'],
  [new RegExp(String.raw`POST /v1/agents/${PARAM}/token`, 'g'), 'rotateToken'],
  [/POST \/v1\/agents(?![/\w])/g, 'registerAgent'],
  [/GET \/v1\/agents(?![/\w])/g, 'listAgents'],
  [/GET \/v1\/audit\/events/g, 'auditEvents'],
  [/GET \/v1\/wake/g, 'watch'],
];

/** The methods that take one id (getMessage(messageId)), not an object. */
const ID_METHODS = ['getMessage', 'getTask', 'archive', 'unarchive', 'claimTask', 'delivery'];

/**
 * A refusal's text in the library's words: its MCP tools and HTTP routes as the methods that do the same
 * ("get_message: 'messageId' must be ..." -> "getMessage: ...", "list_agents (GET /v1/agents) lists the agents" ->
 * "listAgents() lists the agents"), a call's JSON as the method's arguments, a tool and its route said together once.
 */
export function inMethodWords(text: string): string {
  let said = text
    .replace(/\(HTTP: [^()]*\)/g, '')
    .replace(/ or `mailbox agent token`/g, '')
    // the CLI's way beside the route's, in parentheses: "(GET /v1/audit/events, mailbox audit replay)"
    .replace(/,? (?:or )?mailbox (?:agent|audit) [^,()]*(?=\))/g, '')
    .replace(/list_messages \{"box": "outbox"\}, GET \/v1\/messages\?box=outbox/g, "listMessages({ box: 'outbox' })")
    .replace(/\(their MAILBOX_ADMIN_TOKEN, or the one the server generated[^()]*\)/g, "(createMailbox's adminToken)")
    .replace(/\bDid you mean (\w+)=(@[\w-]+)\?/g, "Did you mean { $1: '$2' }?");
  for (const [route, method] of METHOD_OF_ROUTE) said = said.replace(route, method);
  said = said.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (word) => METHOD_OF_TOOL[word] ?? word);
  // (not the methods named as plain words: "its delivery (delivery)" says what and which method)
  const methods = Object.values(METHOD_OF_TOOL)
    .filter((method) => /[A-Z]/.test(method))
    .join('|');
  return (
    said
      // a tool and its route, said together: "listTasks (listTasks)", "listTasks or listTasks", "(listMessages, listMessages)"
      .replace(new RegExp(String.raw`\b(${methods})((?: \{[^{}]*\})?) (?:\(\1(?:\([^()]*\))?\)|or \1\b)`, 'g'), '$1$2')
      .replace(new RegExp(String.raw`\((${methods}), \1\)`, 'g'), '($1)')
      .replace(/\b(listMessages|listTasks)\((\{[^()]*\})\) or \1\b/g, '$1($2)')
      // a call's JSON as the method's arguments
      .replace(new RegExp(String.raw`\b(${ID_METHODS.join('|')}) \{"\w+": "([^"]*)"\}`, 'g'), "$1('$2')")
      .replace(new RegExp(String.raw`\b(${Object.values(METHOD_OF_TOOL).join('|')}) (\{[^{}]*\})`, 'g'), '$1($2)')
      .replace(/\blistAgents\b(?![(\w])/g, 'listAgents()')
      .replace(/ {2,}/g, ' ')
      .replace(/ \.(?=\s|$)/g, '.')
  );
}

/** The token's refusal (mailbox.as), in the library's words: where its caller gets a token, and how it gives one. */
const TOKEN_WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /the admin token is the server's MAILBOX_ADMIN_TOKEN or <data dir>\/admin\.token/g,
    "the admin token is createMailbox's adminToken",
  ],
  [
    /^Send Authorization: Bearer <token>$/,
    "Pass mailbox.as the token registerAgent returned (its 'token'), or createMailbox's adminToken",
  ],
];

/**
 * A refusal of a library call (a client's method, mailbox.as) as its caller reads it: the MCP tools and HTTP routes
 * its text names as the methods it has (inMethodWords), in the message, the issues' messages and the hint. The code
 * and the other details stay, as over HTTP and MCP, whose words are unchanged (they never come through here).
 */
export function inMethodTerms(error: unknown): unknown {
  if (!isMailboxError(error)) return error;
  const { error: title, code, message, ...details } = error.envelope;
  const words = (text: string) => TOKEN_WORDS.reduce((said, [from, to]) => said.replace(from, to), inMethodWords(text));
  const said: Record<string, unknown> = { ...details };
  if (typeof details.hint === 'string') said.hint = words(details.hint);
  if (Array.isArray(details.issues))
    said.issues = details.issues.map((issue: unknown) =>
      issue !== null && typeof issue === 'object' && typeof (issue as { message?: unknown }).message === 'string'
        ? { ...issue, message: words((issue as { message: string }).message) }
        : issue,
    );
  if (words(message) === message && JSON.stringify(said) === JSON.stringify(details)) return error;
  return withCause(new MailboxError(code, title, words(message), said), error);
}

/** Every method of `client` with its refusals in the library's words (inMethodTerms); its other members as they are. */
export function everyRefusalInMethodTerms<T extends object>(client: T): T {
  return Object.fromEntries(
    Object.entries(client).map(([name, value]) => [
      name,
      typeof value === 'function'
        ? (...args: unknown[]) =>
            (value as (...args: unknown[]) => Promise<unknown>)(...args).catch((error: unknown) => {
              throw inMethodTerms(error);
            })
        : value,
    ]),
  ) as T;
}

/** A send's warnings (SELF_ADDRESSED named list_agents and GET /v1/agents) in the library's words; the rest as it is. */
export function warningsInMethodWords<R>(result: R): R {
  const warnings = (result as { warnings?: unknown } | null)?.warnings;
  if (!Array.isArray(warnings)) return result;
  return {
    ...result,
    warnings: warnings.map((warning: unknown) =>
      warning !== null && typeof warning === 'object' && typeof (warning as { message?: unknown }).message === 'string'
        ? { ...warning, message: inMethodWords((warning as { message: string }).message) }
        : warning,
    ),
  };
}
