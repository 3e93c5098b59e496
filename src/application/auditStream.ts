/**
 * The admin/auditor event stream behind the console's live flow: the ordered
 * log from a position (or from its head, live), as flow entries, filtered.
 * Resumable: every entry carries its position; reopen with it as `after`.
 */
import type { Actor } from '../commands/roles';
import type { EventStore } from '../events/eventStore';
import { messageStream } from '../events/streams';
import { requireRole } from './authorization';
import { flowEntryOf, passesFilter, type FlowEntry, type FlowFilter } from './liveFlow';

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

export async function openAuditStream(
  store: EventStore,
  actor: Actor,
  options: { after: bigint | null; filter: FlowFilter },
  sink: AuditStreamSink,
): Promise<() => Promise<void>> {
  requireRole(actor, ['auditor', 'admin'], 'Watching the event log');
  const start = options.after ?? (await store.headPosition());
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
  sink.ready(start === null ? null : start.toString());
  let stopped = false;
  void (async () => {
    try {
      for await (const event of subscription) {
        if (stopped) break;
        if (event.type === 'MessageSent') remember(event.data.messageId, event.data.threadId);
        const entry = flowEntryOf(event);
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
