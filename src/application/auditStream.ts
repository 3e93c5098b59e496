/**
 * The admin/auditor event stream behind the console's live flow: the ordered
 * log from a position (or from its head, live), as flow entries, filtered.
 * Resumable: every entry carries its position; reopen with it as `after`.
 */
import type { Actor } from '../commands/roles';
import type { EventStore } from '../events/eventStore';
import { messageStream } from '../events/streams';
import { MailboxError } from '../errors';
import { requireRole } from './authorization';
import { flowEntryOf, passesFilter, withConcernedAgents, type FlowEntry, type FlowFilter } from './liveFlow';

export interface AuditStreamSink {
  /** First: where the stream starts (null: the log is empty). */
  ready(after: string | null): void;
  /** One entry; false when the reader has gone (the stream stops). */
  entry(entry: FlowEntry): boolean;
  /** The subscription failed; the reader reconnects from its last position. */
  failed(error: unknown): void;
}

/** Threads of messages seen recently, for the thread filter on reads and archives (which do not carry it). */
const THREAD_CACHE_ENTRIES = 10_000;
/**
 * Recipients of the messages sent last, for the reply requests that follow them (in the same append): a request names
 * no recipient, and is looked up in its message's stream when its send is not among these.
 */
const RECIPIENT_CACHE_ENTRIES = 256;

export async function openAuditStream(
  store: EventStore,
  actor: Actor,
  options: { after: bigint | null; filter: FlowFilter; afterFrom?: string },
  sink: AuditStreamSink,
): Promise<() => Promise<void>> {
  requireRole(actor, ['auditor', 'admin'], 'Watching the event log');
  const head = await store.headPosition();
  if (options.after !== null && (head === null || options.after > head))
    throw pastTheHead(options.after, head, options.afterFrom ?? 'after');
  const start = options.after ?? head;
  const subscription = store.subscribe(start);
  const threads = new Map<string, string>();
  const remember = (messageId: string, threadId: string) => {
    if (threads.size >= THREAD_CACHE_ENTRIES) threads.delete(threads.keys().next().value as string);
    threads.set(messageId, threadId);
  };
  const threadOf = async (messageId: string): Promise<string | null> => {
    const known = threads.get(messageId);
    if (known !== undefined) return known;
    const [first] = await store.readStream(messageStream(messageId));
    const threadId = first?.type === 'MessageSent' ? first.data.threadId : null;
    if (threadId !== null) remember(messageId, threadId);
    return threadId;
  };
  const recipients = new Map<string, readonly string[]>();
  const rememberRecipients = (messageId: string, identities: readonly string[]) => {
    if (recipients.size >= RECIPIENT_CACHE_ENTRIES) recipients.delete(recipients.keys().next().value as string);
    recipients.set(messageId, identities);
  };
  const recipientsOf = async (messageId: string): Promise<readonly string[]> => {
    const known = recipients.get(messageId);
    if (known !== undefined) return known;
    const [first] = await store.readStream(messageStream(messageId));
    return first?.type === 'MessageSent' ? first.data.recipients : [];
  };
  sink.ready(start === null ? null : start.toString());
  let stopped = false;
  void (async () => {
    try {
      for await (const event of subscription) {
        if (stopped) break;
        if (event.type === 'MessageSent') {
          remember(event.data.messageId, event.data.threadId);
          rememberRecipients(event.data.messageId, event.data.recipients);
        }
        const entry = await withConcernedAgents(flowEntryOf(event), event, recipientsOf);
        if (!(await passesFilter(entry, options.filter, threadOf))) continue;
        if (!sink.entry(entry)) break;
      }
    } catch (error) {
      if (!stopped) sink.failed(error);
    } finally {
      stopped = true;
      await subscription.close().catch(() => undefined);
    }
  })();
  return async () => {
    stopped = true;
    await subscription.close();
  };
}

/**
 * A start past the log head is refused, not waited on: the events up to it would be skipped as they arrive, unsaid.
 * A reader gets there with a position of another log (a Last-Event-ID kept across a restore from an older backup, or
 * from another mailbox). `mailbox audit replay --from` refuses the same position the same way.
 */
export function pastTheHead(after: bigint, head: bigint | null, field: string, reader = 'the stream'): MailboxError {
  const where = head === null ? 'the log is empty' : `the log head is ${head}`;
  return new MailboxError(
    'NOT_FOUND',
    'Past the log head',
    `${field} ${after} is past the log head (${where}): ${reader} would skip every event up to ${after} as it arrived. ` +
      `Give a position the log has (${head === null ? 'none yet' : `${head} or lower`}), or none to start live at the head; ` +
      'a position kept from before a restore, or from another mailbox, is not of this log.',
    { field, after: after.toString(), head: head?.toString() ?? null },
  );
}
