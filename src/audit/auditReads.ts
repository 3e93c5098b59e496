/** Reads behind `audit message` and `audit agent`: a stream when the source can, else a scan of the log. */
import { AGENT_REGISTRY_STREAM, messageStream, taskStream } from '../events/streams';
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
  return scanned(source, (event) => streams.includes(event.streamName));
}

export async function loadMessageStory(source: LogSource, messageId: string): Promise<MessageStory | null> {
  return messageStory(await messageEvents(source, messageId));
}

/** The story's recipients that were retired, each with the AgentRetired event's time and log position, by identity. */
export type RetiredRecipients = Record<string, { at: string; position: string }>;

/**
 * A message's story with its recipients that were retired (from the agents stream, a registration or retirement per
 * event): what `audit message --json` tells of it, but its delivery ledger (GET /v1/messages/{id}/delivery's).
 */
export async function loadStoryWithRetirements(
  source: LogSource,
  messageId: string,
): Promise<(MessageStory & { retiredRecipients: RetiredRecipients }) | null> {
  const story = await loadMessageStory(source, messageId);
  if (story === null) return null;
  const registry =
    source.readStream !== null
      ? await source.readStream(AGENT_REGISTRY_STREAM)
      : await scanned(source, (event) => event.streamName === AGENT_REGISTRY_STREAM);
  const retired = new Map<string, { at: string; position: string }>();
  for (const event of registry)
    if (event.type === 'AgentRetired')
      retired.set(event.data.identity, { at: event.data.retiredAt, position: event.position.toString() });
  const retiredRecipients: RetiredRecipients = {};
  for (const identity of story.audience) {
    const at = retired.get(identity);
    if (at !== undefined) retiredRecipients[identity] = at;
  }
  return { ...story, retiredRecipients };
}

async function scanned(source: LogSource, keep: (event: StoredEvent) => boolean): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for await (const page of pagesOf(source, null)) events.push(...page.filter(keep));
  return events;
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
