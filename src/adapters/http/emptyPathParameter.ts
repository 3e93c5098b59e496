/**
 * A path that stops where its id goes (`GET /v1/messages/`, `POST /v1/messages//read`, `DELETE /v1/agents/`) is matched
 * by fastify to the route with an empty id, whose answer was "get_message: 'messageId' must be a message id: a UUID,
 * as returned by a send" to a caller who sent no id at all (most often one who meant the listing, with a trailing
 * slash). Refused before the route runs instead, saying what the path lacks and both valid forms: the listing (when
 * there is one) and the route with its id.
 */
import type { FastifyInstance } from 'fastify';
import { MailboxError } from '../../errors';

export interface Named {
  /** The field the route's own errors name. */
  field: string;
  noun: string;
  plural: string;
  form: string;
}

export const MESSAGE: Named = {
  field: 'messageId',
  noun: 'message id',
  plural: 'messages',
  form: 'a UUID, as a send or a listing returns it',
};
export const TASK: Named = {
  field: 'taskId',
  noun: 'task id',
  plural: 'tasks',
  form: 'the messageId of the message that carried the task, a UUID',
};
const AGENT: Named = { field: 'identity', noun: 'identity', plural: 'agents', form: '@ followed by its name, e.g. @neo-gpt' };

const named = (url: string, parameter: string): Named =>
  parameter === 'identity' ? AGENT : url.startsWith('/v1/tasks/') ? TASK : MESSAGE;

/** `routes`: the routes served (method, url), read at request time: whether the path's listing (GET <prefix>) is one. */
export function refuseEmptyPathParameters(scope: FastifyInstance, routes: ReadonlyArray<{ method: string; url: string }>): void {
  scope.addHook('preValidation', async (request) => {
    const params = (request.params ?? {}) as Record<string, unknown>;
    const parameter = Object.keys(params).find((name) => params[name] === '');
    const url = request.routeOptions.url;
    if (parameter === undefined || url === undefined) return;
    const what = named(url, parameter);
    const listing = url.slice(0, url.indexOf(`/:${parameter}`));
    const listed = routes.some((route) => route.method === 'GET' && route.url === listing);
    const documented = url.replace(/:([A-Za-z]+)/g, '{$1}');
    const path = request.url.split('?')[0];
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${request.method} ${path} names no ${what.noun}: the path is empty where it goes. ` +
        (listed ? `To list the ${what.plural}, GET ${listing}; for one, ` : 'Give one: ') +
        `${request.method} ${documented} with its ${what.noun} (${what.form})` +
        `${request.method === 'GET' ? '.' : '. Nothing was done.'}`,
      { field: what.field, path },
    );
  });
}
