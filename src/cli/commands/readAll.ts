/**
 * `mailbox read --all`: POST /v1/messages/read {all: true} with its filters, the bulk catch-up an agent had only over
 * HTTP. The messages are not shown (that is `mailbox inbox`); the answer says how many were marked read, and how many
 * matched but were withheld because they were never listed or shown to the caller.
 */
import { MailboxError } from '../../errors';
import type { ReadAllResult } from '../../application/mailboxCommands';
import type { MailboxHttpClient } from '../../adapters/http/client/mailboxHttpClient';
import { print, printJson, printWarnings, type ClientOptions } from './clientOptions';

export interface ReadOptions extends ClientOptions {
  peek?: boolean;
  all?: boolean;
  thread?: string;
  from?: string;
  priority?: string;
  before?: string;
  includeUnseen?: boolean;
}

/** The flags that narrow --all, with the body field each one sets. */
export const READ_ALL_FLAGS = [
  ['thread', '--thread', 'threadId'],
  ['from', '--from', 'from'],
  ['priority', '--priority', 'priority'],
  ['before', '--before', 'before'],
  ['includeUnseen', '--include-unseen', 'includeUnseen'],
] as const;

export function readUsage(hint: string): MailboxError {
  return new MailboxError('VALIDATION_FAILED', 'Validation failed', hint, { field: 'messageId' });
}

export async function readAll(client: MailboxHttpClient, messageIds: readonly string[], options: ReadOptions): Promise<void> {
  if (!options.all) throw readUsage('Name the messages to read (mailbox read <messageId>...), or give --all.');
  if (messageIds.length > 0) throw readUsage('--all marks every unread message read: give it without message ids.');
  if (options.peek) throw readUsage('--peek shows messages without marking them; --all marks them without showing them.');
  const filters = Object.fromEntries(
    READ_ALL_FLAGS.filter(([flag]) => options[flag] !== undefined).map(([flag, , field]) => [field, options[flag]]),
  );
  const result = (await client.markRead({ all: true, ...filters })) as ReadAllResult;
  if (options.json) return printJson(result);
  const withheld = result.withheldUnseenCount;
  print(
    `Marked ${result.changed} message${result.changed === 1 ? '' : 's'} read.` +
      (withheld > 0
        ? ` ${withheld} unread ${withheld === 1 ? 'was' : 'were'} left unread: never listed or shown to you ` +
          '(mailbox inbox --status unread lists them; --include-unseen marks them too).'
        : ''),
  );
  printWarnings(result);
}
