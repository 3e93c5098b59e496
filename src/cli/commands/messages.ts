/** `mailbox send | inbox | read | archive`: an agent's mail, over the HTTP API. */
import { Option, type Command } from 'commander';
import { MailboxError, isMailboxError } from '../../errors';
import {
  action,
  clientFrom,
  print,
  printJson,
  printWarnings,
  reportError,
  withClientOptions,
  type ClientOptions,
} from './clientOptions';
import type { MailboxHttpClient } from '../../adapters/http/client/mailboxHttpClient';
import { formatMessage, formatPage } from './format';
import { addresseeText } from '../../events/addressing';
import { oneMessageSchema } from '../../commands/schemas';
import { readsLikeSeveral, splitSeveral } from '../../commands/recipients';
import { parseInput } from '../../commands/validation';
import { collect } from './repeatedOptions';
import { checkLimitFlag } from './limitFlag';
import { listQuerySchema } from '../../application/listQueryParser';
import { strictUtf8Text } from '../../support/utf8';
import { readFlagFile } from './flagFile';
import { TASK_FLAG_HELP } from './taskFlagHelp';
import { READ_ALL_FLAGS, readAll, readUsage, type ReadOptions } from './readAll';
import { flagsOf } from './flagTerms';

interface SendOptions extends ClientOptions {
  bodyFile?: string;
  priority?: string;
  tag?: string[];
  thread?: string;
  replyTo?: string;
  task?: string;
  wakeSuppressed?: boolean;
  expectsReplyBy?: string;
  idempotencyKey?: string;
}

/**
 * `read`: how the arguments were split, for the message when no body came. `send @b @c "hello"` reads @c as a second
 * recipient and "hello" as the subject: "the third argument" pointed at the subject's place, and a subject written like
 * an identity ("@c") was never said to have been taken for a recipient.
 */
function bodyOf(
  body: string | undefined,
  bodyFile: string | undefined,
  read: { to: string | string[]; subject: string },
): string {
  if (body !== undefined && bodyFile !== undefined) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      'Give the body as an argument or with --body-file, not both.',
      { field: 'body' },
    );
  }
  const file = body === '-' ? '-' : bodyFile;
  if (file !== undefined) return utf8Text(nonEmpty(readBodyFile(file), file), file === '-' ? 'stdin' : `'${file}'`);
  if (body !== undefined) return body;
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `A message needs a body: after the recipients (${[read.to].flat().join(' ')}) and the subject ` +
      `(${JSON.stringify(read.subject)}), give the body as the next argument, '-' to read stdin, or --body-file <file>. ` +
      'Nothing was sent.',
    { field: 'body' },
  );
}

/** The bytes of --body-file (stdin for '-'); one that cannot be read is refused naming the flag and the path. */
function readBodyFile(file: string): Buffer {
  if (file === '-') {
    return readFlagFile(0, 'The body from stdin', {
      field: 'body',
      remedy: 'pipe the body in (e.g. < notes.md), or give the file with --body-file <file>. Nothing was sent.',
    });
  }
  return readFlagFile(file, `--body-file '${file}'`, {
    field: '--body-file',
    remedy: "give the path of a readable file, or '-' to read the body from stdin. Nothing was sent.",
  });
}

/**
 * A body read from a file or stdin that holds nothing is refused: an empty pipe is almost always a command before it
 * that failed (`cat notes.md | mailbox send @b s -` with no notes.md), and was sent as an empty message. An empty
 * body on purpose is still one argument away ('').
 */
function nonEmpty(bytes: Buffer, file: string): Buffer {
  if (bytes.length > 0) return bytes;
  const source = file === '-' ? 'The body from stdin' : `--body-file '${file}'`;
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `${source} is empty (0 bytes): nothing was sent. To send an empty body on purpose, give '' as the body argument.`,
    { field: file === '-' ? 'body' : '--body-file', ...(file === '-' ? {} : { path: file }) },
  );
}

/** A body file's text; refused when it is not UTF-8, whose invalid bytes reading it as 'utf8' would turn into U+FFFD. */
function utf8Text(bytes: Buffer, source: string): string {
  return strictUtf8Text(
    bytes,
    (problem, offset) =>
      new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        `The body from ${source} is not UTF-8: ${problem}; convert it (e.g. iconv -f latin1 -t utf-8) and send again. ` +
          'Nothing was sent.',
        { field: 'body', offset },
      ),
  );
}

/**
 * Several identities written as one argument ('@b,@c'): the server's hint is the JSON list of the HTTP body, which a
 * shell user cannot give; on the command line each recipient is its own argument.
 */
function inArgumentForm(error: unknown): unknown {
  if (!isMailboxError(error) || error.code !== 'INVALID_RECIPIENT_SHAPE') return error;
  const { error: title, code: _code, message: _message, ...details } = error.envelope;
  const { to } = details;
  if (typeof to !== 'string' || !readsLikeSeveral(to)) return error;
  return new MailboxError(
    'INVALID_RECIPIENT_SHAPE',
    title,
    `Recipient '${to}' is several identities in one argument (text is never split, nothing was sent); give each as ` +
      `its own argument: mailbox send ${splitSeveral(to).join(' ')} "subject" "body".`,
    details,
  );
}

/**
 * `send @b @c "subject" [body]`: the first argument is a recipient, and so is each next one that
 * reads like one (starts with @ or AGENT: and holds no space); the rest are the subject and the body.
 * One recipient is sent as is, several as a list (the server checks every shape and names a wrong one).
 */
export function splitSendArguments(args: readonly string[]): { to: string | string[]; subject: string; body?: string } {
  const looksLikeRecipient = (arg: string) => /^(@|AGENT:)\S*$/.test(arg);
  let count = 1;
  while (count < args.length && looksLikeRecipient(args[count])) count++;
  const recipients = args.slice(0, count);
  const [subject, body, ...extra] = args.slice(count);
  if (subject === undefined || extra.length > 0) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      subject === undefined
        ? 'Give one or more recipients, then the subject (and the body): mailbox send @b @c "subject" "body".'
        : `After the recipients come the subject and the body only; got ${extra.length} more argument(s): quote a subject or body that has spaces.`,
      { field: subject === undefined ? 'subject' : 'body' },
    );
  }
  return { to: recipients.length === 1 ? recipients[0] : recipients, subject, ...(body !== undefined ? { body } : {}) };
}

/** send's flags by the field each sets, which its refusals name (flagTerms.ts). */
const SEND_FLAGS = {
  priority: '--priority',
  tags: '--tag',
  threadId: '--thread',
  inReplyTo: '--reply-to',
  task: '--task',
  wakeSuppressed: '--wake-suppressed',
  expectsReplyBy: '--expects-reply-by',
  idempotencyKey: '--idempotency-key',
};

/** inbox's filters: [option, flag, the list query's field]; the query is built from it and its refusals name the flag. */
const INBOX_FILTERS = [
  ['status', '--status', 'status'],
  ['from', '--from', 'from'],
  ['thread', '--thread', 'threadId'],
  ['tag', '--tag', 'tags'],
  ['priority', '--priority', 'priority'],
  ['limit', '--limit', 'limit'],
  ['cursor', '--cursor', 'cursor'],
  ['to', '--to', 'to'],
] as const;
const INBOX_FLAGS = { ...flagsOf(INBOX_FILTERS), 'box=outbox': 'with --outbox', 'box=inbox': 'without --outbox' };

export function registerMessageCommands(program: Command): void {
  // Optional, so that a send with no arguments gets the send's own message (splitSendArguments), not commander's.
  withClientOptions(program.command('send [recipientsSubjectBody...]'))
    .usage('[options] <to...> <subject> [body]')
    .description(
      'send a message to @identity, to several (@b @c ...: one message, each reads its own copy) or AGENT:* (broadcast)',
    )
    .option('--body-file <file>', "read the body from a file ('-' for stdin); an empty one is refused")
    .addOption(new Option('--priority <priority>', 'low, normal (the default) or high'))
    .option('--tag <tag>', 'a tag (repeat for more)', collect)
    .option('--thread <threadId>', 'thread id')
    .option('--reply-to <messageId>', 'the message this replies to (its thread is inherited)')
    .option('--task <json>', 'A2A task envelope as JSON (its fields: below)')
    .option('--wake-suppressed', 'do not wake the recipients')
    .option(
      '--expects-reply-by <when>',
      'each recipient owes a reply by then: a duration from the send (90s, 30m, 2h, 1d, PT30M) or an ISO 8601 time with an offset',
    )
    .option('--idempotency-key <key>', 'makes a retried send safe: the same key returns the original message')
    .addHelpText(
      'after',
      '\nExamples:\n  mailbox send @neo-gpt "review #12" "Please look at the diff."\n' +
        '  mailbox send @neo-gpt @claude "standup" "Notes attached."   # several recipients: one message, one thread\n' +
        '  mailbox send \'AGENT:*\' "deploy at 14:00" --body-file notes.md --priority high   # broadcast: quote the * for the shell\n' +
        TASK_FLAG_HELP,
    )
    .action(
      action(async (args: string[], options: SendOptions) => {
        const { to, subject, body } = splitSendArguments(args);
        const input = {
          to,
          subject,
          body: bodyOf(body, options.bodyFile, { to, subject }),
          ...(options.priority !== undefined ? { priority: options.priority } : {}),
          ...(options.tag ? { tags: options.tag } : {}),
          ...(options.thread !== undefined ? { threadId: options.thread } : {}),
          ...(options.replyTo !== undefined ? { inReplyTo: options.replyTo } : {}),
          ...(options.task !== undefined ? { task: options.task } : {}), // the server accepts the JSON string as is
          ...(options.wakeSuppressed ? { wakeSuppressed: true } : {}),
          // Reply obligations (docs/delivery.md) were HTTP, MCP and library only: the CLI could not ask for one.
          ...(options.expectsReplyBy !== undefined ? { expectsReplyBy: options.expectsReplyBy } : {}),
        };
        const { result: sent, replayed } = await clientFrom(options)
          .sendOutcome(input, options.idempotencyKey)
          .catch((error: unknown) => {
            throw inArgumentForm(error);
          });
        // The body as the server answered it: a replay's is the original result (the header says it was a replay).
        if (options.json) return printJson(sent);
        if (replayed) {
          // The same key and content again (the server's Idempotent-Replayed header): this call sent nothing, which
          // "Sent ..." would have claimed.
          print(
            `Already sent ${sent.messageId} at ${sent.sentAt} with this --idempotency-key: nothing new was sent ` +
              `(delivered to ${sent.recipients.length ? sent.recipients.join(', ') : 'nobody yet'}).`,
          );
          printReplyDue(sent);
          return printWarnings(sent);
        }
        // Accepted is not delivered: a direct message to an unregistered identity waits for a registration that may never come.
        const unregistered = (sent.warnings ?? []).find((warning) => warning.code === 'UNREGISTERED_RECIPIENT');
        if (unregistered) {
          print(
            typeof sent.to === 'string'
              ? `Sent ${sent.messageId}: accepted for ${sent.to}, who is not registered: it will see it only if registered under that name.`
              : `Sent ${sent.messageId}: accepted for ${addresseeText(sent.to)}, but ${String(unregistered.identity)} is not ` +
                  'registered: it will see it only if registered under that name.',
          );
          const suggestions = unregistered.suggestions;
          if (Array.isArray(suggestions) && suggestions.length) print(`did you mean: ${suggestions.join(', ')}`);
        } else {
          print(
            `Sent ${sent.messageId} to ${addresseeText(sent.to)} (delivered to ${sent.recipients.length ? sent.recipients.join(', ') : 'nobody yet'}).`,
          );
        }
        printReplyDue(sent);
        printWarnings(sent, unregistered);
      }, SEND_FLAGS),
    );

  withClientOptions(program.command('inbox'))
    .description('list your messages, newest first (* = unread)')
    .addOption(
      new Option('--status <status>', 'unread, read, all (the default: not archived) or archived').choices([
        'unread',
        'read',
        'all',
        'archived',
      ]),
    )
    .option('--from <identity>', 'only from this sender')
    .option('--thread <threadId>', 'only this thread')
    .option('--tag <tag>', 'only with this tag (repeat for more: messages carrying every one)', collect)
    .addOption(new Option('--priority <priority>', 'only this priority').choices(['low', 'normal', 'high']))
    .option('--limit <n>', 'page size (1-200, default 50)')
    .option('--cursor <cursor>', 'next page, from the previous output')
    .option('--outbox', 'list what you sent instead')
    .option('--to <recipient>', 'outbox only: only to this recipient')
    .action(
      action(async (options: ClientOptions & Record<string, unknown>) => {
        checkLimitFlag(options.limit as string | undefined, listQuerySchema.shape.limit, 'mailbox inbox');
        const query = Object.fromEntries(
          [
            ['box', options.outbox ? 'outbox' : undefined],
            ...INBOX_FILTERS.map(([option, , field]) => [field, options[option]]),
          ].filter(([, value]) => value !== undefined),
        );
        const page = await clientFrom(options).listMessages(query);
        if (options.json) return printJson(page);
        const filtered = ['from', 'thread', 'tag', 'priority'].some((flag) => options[flag] !== undefined);
        print(formatPage(page, Boolean(options.outbox), filtered || (options.status ?? 'all') !== 'all'));
      }, INBOX_FLAGS),
    );

  withClientOptions(program.command('read [messageId...]'))
    .description('show messages with their bodies and mark them read; --all marks your unread ones read at once')
    .option('--peek', 'show without marking read')
    .option('--all', 'mark every unread message you have seen read (narrowed by the flags below), without showing them')
    .option('--thread <threadId>', 'with --all: only this thread')
    .option('--from <identity>', 'with --all: only from this sender')
    .addOption(new Option('--priority <priority>', 'with --all: only this priority').choices(['low', 'normal', 'high']))
    .option('--before <time>', 'with --all: only messages sent before this ISO time (2026-01-31T12:00:00Z)')
    .option('--include-unseen', 'with --all: also those never listed or shown to you')
    .action(
      action(async (messageIds: string[], options: ReadOptions) => {
        const client = clientFrom(options);
        if (options.all || messageIds.length === 0) return readAll(client, messageIds, options);
        const allOnly = READ_ALL_FLAGS.find(([flag]) => options[flag] !== undefined);
        if (allOnly) throw readUsage(`${allOnly[1]} narrows read --all only; with ids, name the messages instead.`);
        // Every id is checked, and every message fetched, before any is shown or marked read: `read a b c` with a
        // wrong c neither shows nor marks a and b, so the command can be run again as corrected.
        for (const messageId of messageIds) parseInput(oneMessageSchema, { messageId }, `mailbox read '${messageId}'`);
        const messages = [];
        for (const messageId of messageIds) messages.push(await client.getMessage(messageId));
        for (const message of messages) {
          const { messageId } = message;
          let readAt = message.readAt;
          let note = '';
          let marked: { readAt?: string; warnings?: ReadonlyArray<{ message?: unknown }> } = {};
          if (!options.peek && !readAt) {
            try {
              marked = (await client.markRead({ messageId })) as typeof marked;
              readAt = marked.readAt ?? readAt;
            } catch (error) {
              if (!isMailboxError(error) || error.code !== 'NOT_A_RECIPIENT') throw error;
              note = '(not marked read: you are not a recipient of this message)';
            }
          }
          if (options.json) printJson({ ...message, readAt, ...(marked.warnings ? { warnings: marked.warnings } : {}) });
          else {
            print(`${formatMessage({ ...message, readAt })}${note ? `${note}\n` : ''}`);
            printWarnings(marked);
          }
        }
      }, flagsOf(READ_ALL_FLAGS)),
    );

  withClientOptions(program.command('unarchive <messageId...>'))
    .description('bring messages you archived back to your inbox (mailbox inbox --status archived lists them)')
    .action(
      action((messageIds: string[], options: ClientOptions) =>
        eachMessage('unarchive', messageIds, options, async (client, messageId) => {
          const result = await client.unarchive(messageId);
          if (options.json) return printJson(result);
          print(
            result.changed
              ? `${result.messageId} is back in your inbox${result.readAt === null ? ' (unread)' : ''}.`
              : `${result.messageId} was not archived: nothing changed.`,
          );
          printWarnings(result);
        }),
      ),
    );

  withClientOptions(program.command('archive <messageId...>'))
    .description('archive messages for yourself (hidden from your inbox and counts)')
    .action(
      action((messageIds: string[], options: ClientOptions) =>
        eachMessage('archive', messageIds, options, async (client, messageId) => {
          const archived = await client.archive(messageId);
          if (options.json) return printJson(archived);
          // An older server's answer has no `changed`: it claimed the archive either way, so say what it said.
          print(
            archived.changed === false
              ? `${archived.messageId} was already archived (at ${archived.archivedAt}): nothing changed.`
              : `Archived ${archived.messageId} at ${archived.archivedAt}.`,
          );
          printWarnings(archived);
        }),
      ),
    );
}

/**
 * `archive a b c`: every id is checked before any request (a malformed one changes nothing, as `read` does), then one
 * call each; a failure is reported for its id and the others still go, the command exiting 1 if any failed.
 */
async function eachMessage(
  verb: string,
  messageIds: readonly string[],
  options: ClientOptions,
  run: (client: MailboxHttpClient, messageId: string) => Promise<void>,
): Promise<void> {
  const client = clientFrom(options);
  for (const messageId of messageIds) parseInput(oneMessageSchema, { messageId }, `mailbox ${verb} '${messageId}'`);
  for (const messageId of messageIds) {
    try {
      await run(client, messageId);
    } catch (error) {
      if (!isMailboxError(error)) throw error;
      reportError(error, options.json);
    }
  }
}

/**
 * The reply's due time as the server keeps it (--expects-reply-by 2h is counted from the send; an offset time is kept in
 * UTC): only --json said it, so a sender could not tell when its recipients' replies fall due.
 */
function printReplyDue(sent: { expectsReplyBy?: string }): void {
  if (sent.expectsReplyBy !== undefined) print(`Each recipient owes a reply by ${sent.expectsReplyBy}.`);
}
