/**
 * A listing's word where one message's or task's id goes: an agent guessing the API asks `GET /v1/messages/unread`
 * (or `/v1/messages/outbox`, `/v1/tasks/claimable`) for a listing, and was told only "'messageId' must be a message
 * id: a UUID", which names no way to the listing it wanted. Refused as before (400, nothing read or written), now
 * naming the listing with that word as its filter, and the route with an id.
 */
import type { FastifyInstance } from 'fastify';
import { listQuerySchema } from '../../application/listQueryParser';
import { TASK_LIST_VIEWS } from '../../commands/tasks/taskSchemas';
import { MailboxError } from '../../errors';
import { MESSAGE, TASK, type Named } from './emptyPathParameter';

interface ListingWords {
  /** The id the route takes, as the empty-path refusal names it (one wording of an id's form). */
  id: Named;
  /** What one id names. */
  item: 'message' | 'task';
  listing: string;
  /** Each word, and the query parameter that takes it. */
  words: ReadonlyMap<string, string>;
}

const wordsOf = (parameter: string, values: readonly string[]) => values.map((value) => [value, parameter] as const);

const MESSAGE_WORDS: ListingWords = {
  id: MESSAGE,
  item: 'message',
  listing: '/v1/messages',
  words: new Map([
    ...wordsOf('status', listQuerySchema.shape.status.unwrap().options),
    ...wordsOf('box', listQuerySchema.shape.box.unwrap().options),
  ]),
};
const TASK_WORDS: ListingWords = {
  id: TASK,
  item: 'task',
  listing: '/v1/tasks',
  words: new Map(wordsOf('view', TASK_LIST_VIEWS)),
};
const ROUTES: Record<string, ListingWords> = { '/v1/messages/:id': MESSAGE_WORDS, '/v1/tasks/:id': TASK_WORDS };

export function refuseListingWordsAsIds(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (request) => {
    if (request.method !== 'GET') return;
    const listing = ROUTES[request.routeOptions.url ?? ''];
    const typed = (request.params as { id?: unknown } | undefined)?.id;
    if (listing === undefined || typeof typed !== 'string') return;
    const parameter = listing.words.get(typed.toLowerCase());
    if (parameter === undefined) return;
    const asked = `${listing.listing}?${parameter}=${typed.toLowerCase()}`;
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `GET ${request.url.split('?')[0]} names no ${listing.item}: '${typed}' is a ` +
        `listing's ${parameter}, not a ${listing.id.noun} (${listing.id.form}). To list them: GET ${asked}; for one: GET ${listing.listing}/{id}.`,
      { field: listing.id.field, suggestions: [`GET ${asked}`, `GET ${listing.listing}/{id}`] },
    );
  });
}
