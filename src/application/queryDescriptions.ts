import { TAG_SHORT_FORM } from '../commands/messageFields';

/** What each list filter means, for the OpenAPI query parameters and the list_messages tool (the schema lives with the projections). */
export const LIST_QUERY_DESCRIPTIONS: Record<string, string> = {
  box: 'inbox: messages to you; outbox: messages you sent (readAt null: who read each is in its delivery ledger)',
  status:
    'inbox only; default all (unread and read, not archived); archived: only the messages you archived, newest first, with archivedAt',
  from: 'inbox only: messages from this @identity',
  to: 'outbox only: messages sent to this recipient (@identity, also as one of a list, or AGENT:*)',
  threadId: "messages of one thread (a reply inherits its parent's threadId)",
  tags: `messages carrying every one of these tags, e.g. ["review"] or review,urgent; each tag as a send takes it (${TAG_SHORT_FORM})`,
  limit: 'page size; default 50',
  cursor: 'nextCursor from the previous page, unchanged (bound to the same box and filters)',
};
