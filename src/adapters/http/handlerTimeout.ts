/**
 * Bounds how long a route handler may take. (fastify's own handlerTimeout is
 * cleared when Node closes a fully-read request, so it never fires here.)
 * The answer is honest about writes: a command that outlives its request can
 * still be applied, and the message says how to find out safely.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { requestTimedOut } from '../../errors';

/** Wraps every route registered after this call, except those marked `config: { streaming: true }` (SSE, MCP). */
export function boundHandlers(app: FastifyInstance, timeoutMs: number): void {
  if (timeoutMs <= 0) return;
  app.addHook('onRoute', (route: RouteOptions) => {
    if ((route.config as { streaming?: boolean } | undefined)?.streaming) return;
    const handler = route.handler;
    route.handler = async function bounded(request, reply) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(requestTimedOut(timeoutMs)), timeoutMs);
      });
      try {
        return await Promise.race([handler.call(this, request, reply), timeout]);
      } finally {
        clearTimeout(timer);
      }
    };
  });
}
