/**
 * Tasks (issue 12): claim, transition, list, and one task as an A2A Task object. The commands are counted and
 * their rejections recorded by commandRecorder.ts, for every route at once.
 */
import type { FastifyInstance } from 'fastify';
import { MailboxError } from '../../../errors';
import { actorOf } from '../auth';
import type { HttpContext } from '../httpContext';
import { noExtraInput, requireBody, singleValuedQuery } from './routeInput';

type ById = { Params: { id: string } };

/** The path names the task; a body that names another is refused, never silently overridden. */
function withTaskId(body: unknown, taskId: string, what: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body; // the schema explains the valid form
  const named = (body as { taskId?: unknown }).taskId;
  if (named !== undefined && named !== taskId) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${what}: the task is named by the path; drop "taskId" from the body.`,
      {
        field: 'taskId',
      },
    );
  }
  return { ...body, taskId };
}

export function taskRoutes(app: FastifyInstance, { mailbox }: HttpContext): void {
  const { tasks, taskQueries } = mailbox;

  app.post<ById>('/v1/tasks/:id/claim', async (request) => {
    return tasks.claim(actorOf(request), withTaskId(request.body ?? {}, request.params.id, 'POST /v1/tasks/{id}/claim'));
  });

  app.post<ById>('/v1/tasks/:id/transition', async (request) => {
    const body = requireBody(request.body, 'POST /v1/tasks/{id}/transition', '{"to": "Working"}');
    return tasks.transition(actorOf(request), withTaskId(body, request.params.id, 'POST /v1/tasks/{id}/transition'));
  });

  // HEAD (fastify answers it with this handler, less the body) shows nothing: nothing becomes seen.
  app.get('/v1/tasks', async (request) =>
    taskQueries.listTasks(actorOf(request), singleValuedQuery(request.query, ['state'], 'GET /v1/tasks'), {
      shown: request.method !== 'HEAD',
    }),
  );

  app.get<ById>('/v1/tasks/:id', async (request) => {
    noExtraInput(request.query, 'GET /v1/tasks/{id}');
    return taskQueries.getTask(actorOf(request), { taskId: request.params.id }, { shown: request.method !== 'HEAD' });
  });
}
