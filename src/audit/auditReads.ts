/** Reads behind `audit message` and `audit agent`: a stream when the source can, else a scan of the log. */
import { messageStream, taskStream } from '../events/streams';
import type { StoredEvent } from '../events/types';
import { AgentTimeline, type TimelineEntry } from './agentTimeline';
import { pagesOf, type LogSource } from './logSource';
import { messageStory, type MessageStory } from './messageStory';

/** The streams a message's story is told from: its own and its task's (issue 12). */
export const messageStreams = (messageId: string): string[] => [messageStream(messageId), taskStream(messageId)];

/** The message's stream and its task's, in log order. */
export async function messageEvents(source: LogSource, messageId: string): Promise<StoredEvent[]> {
  const streams = messageStreams(messageId);
  if (source.readStream !== null) {
    const [message, task] = await Promise.all(streams.map((stream) => source.readStream!(stream)));
    return [...message, ...task].sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  }
  const events: StoredEvent[] = [];
  for await (const page of pagesOf(source, null)) events.push(...page.filter((event) => streams.includes(event.streamName)));
  return events;
}

export async function loadMessageStory(source: LogSource, messageId: string): Promise<MessageStory | null> {
  return messageStory(await messageEvents(source, messageId));
}

/**
 * Streams the agent's timeline entries in log order. Returns how many events were scanned, and the registered
 * identities that differ from `identity` only in case (for the answer to a name that holds nothing: `@ALICE` for
 * `@alice`).
 */
export async function agentTimeline(
  source: LogSource,
  identity: string,
  sink: (entries: TimelineEntry[]) => void | Promise<void>,
  progress?: (position: bigint) => void,
): Promise<{ scanned: number; caseVariants: string[] }> {
  const timeline = new AgentTimeline(identity);
  const folded = identity.toLowerCase();
  const caseVariants = new Set<string>();
  let scanned = 0;
  for await (const page of pagesOf(source, null)) {
    const entries = page.flatMap((event) => timeline.entriesFor(event));
    for (const event of page) {
      if (event.type !== 'AgentRegistered') continue;
      const registered = (event.data as { identity: string }).identity;
      if (registered !== identity && registered.toLowerCase() === folded) caseVariants.add(registered);
    }
    scanned += page.length;
    if (entries.length > 0) await sink(entries);
    progress?.(page[page.length - 1].position);
  }
  return { scanned, caseVariants: [...caseVariants] };
}
