/**
 * A body over the request limit on a route that answers it in its own protocol once it knows what the request was
 * (`config: { watchesOversizedBody }`: POST /mcp, where a tool call too large to be read is answered as that call).
 * The routes of a scope given to readOversizedBodies have their bodies read here rather than by fastify: up to the
 * limit a body is kept and parsed as any other; past it, on a watching route, nothing more is kept or parsed, but the
 * bytes are counted (the refusal says the size) and shown to the route's watcher, which reads from them what the request
 * was. So the limit holds (no byte past it is kept, nothing over it becomes a command) while the answer can teach.
 * Reading stops at READ_PAST_LIMIT_BYTES (the connection is then closed, as on any refused body); a route without a
 * watcher is refused at the limit, as fastify refuses it.
 */
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { payloadTooLarge } from './httpErrors';
import { parseRequestBody } from './jsonBody';

export interface OversizedBodyWatcher {
  write(chunk: Buffer): void;
}

type WatchingConfig = { watchesOversizedBody?: (request: FastifyRequest) => OversizedBodyWatcher };

/** How much of an oversized body a watching route reads (counted, never kept) before it stops and answers. */
export const READ_PAST_LIMIT_BYTES = 16 * 1024 * 1024;

type Done = (error: Error | null, value?: unknown) => void;

export function readOversizedBodies(scope: FastifyInstance, limit: number): void {
  scope.removeAllContentTypeParsers();
  const parser = (request: FastifyRequest, payload: NodeJS.ReadableStream, done: Done) => readBody(request, payload, limit, done);
  scope.addContentTypeParser('application/json', parser);
  scope.addContentTypeParser('*', parser);
}

function readBody(request: FastifyRequest, payload: NodeJS.ReadableStream, limit: number, done: Done): void {
  const declared = Number(request.headers['content-length']);
  const watch = (request.routeOptions.config as WatchingConfig | undefined)?.watchesOversizedBody;
  if (watch === undefined && declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  const chunks: Buffer[] = [];
  let received = 0;
  let watcher: OversizedBodyWatcher | undefined;
  const finish = (error: Error | null, value?: unknown) => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onEnd);
    done(error, value);
  };
  const tooLarge = (complete: boolean) =>
    payloadTooLarge(limit, Number.isNaN(declared) ? { bytes: received, complete } : { bytes: declared, complete: true });
  function onData(data: Buffer | string) {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    received += chunk.length;
    if (watcher === undefined && received > limit) {
      if (watch === undefined) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      watcher = watch(request);
      for (const kept of chunks.splice(0)) watcher.write(kept);
    }
    if (watcher === undefined) {
      chunks.push(chunk);
      return;
    }
    watcher.write(chunk);
    if (received >= READ_PAST_LIMIT_BYTES) finish(tooLarge(false));
  }
  function onEnd(error?: Error) {
    if (error) {
      const status = (error as { statusCode?: unknown }).statusCode;
      if (!(typeof status === 'number' && status >= 400)) Object.assign(error, { statusCode: 400 });
      return finish(error);
    }
    if (!Number.isNaN(declared) && received !== declared) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    if (watcher !== undefined) return finish(tooLarge(true));
    let body: unknown;
    try {
      body = parseRequestBody(request, Buffer.concat(chunks, received));
    } catch (error) {
      return finish(error as Error);
    }
    finish(null, body);
  }
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onEnd);
  payload.resume();
}
