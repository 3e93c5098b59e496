/**
 * What the tests of a mailbox on Redis views do around a running server: start it with a log the test reads and three
 * agents, send them a round of mail, count the projector's looks at the views, and act on Redis as an operator (or a
 * managed service) would: limit its memory and lift the limit.
 */
import { Redis } from 'ioredis';
import type { MailboxConfigInput } from '../../src/config';
import { startTestServer, type TestServer } from './httpServer';
import { recordingLogger, type RecordingLogger } from './recordingLogger';
import { REDIS_TEST_TIMEOUT_MS } from './redisDeadline';

export interface LoggedRedisServer {
  server: TestServer;
  log: RecordingLogger;
  /** identity -> token of @a, @b and @c. */
  tokens: Record<string, string>;
}

/** A server on the Redis at `redisUrl` (namespace `namespace`, the tests' Redis deadline), its log recorded, @a, @b, @c registered. */
export async function startLoggedRedisServer(
  redisUrl: string,
  namespace: string,
  config: MailboxConfigInput = {},
): Promise<LoggedRedisServer> {
  const log = recordingLogger();
  const server = await startTestServer(
    { redisUrl, redisNamespace: namespace, redisTimeoutMs: REDIS_TEST_TIMEOUT_MS, ...config },
    { logger: log.logger },
  );
  return { server, log, tokens: await server.register(['@a', '@b', '@c']) };
}

/** One message each, @a to @b, @b to @c and @c to @a (each answered 201): every agent has one unread. */
export async function sendRound(server: TestServer, tokens: Record<string, string>, subject = 's'): Promise<void> {
  for (const [from, to] of [
    ['@a', '@b'],
    ['@b', '@c'],
    ['@c', '@a'],
  ]) {
    const sent = await server.call('POST', '/v1/messages', { token: tokens[from], body: { to, subject, body: 'x' } });
    if (sent.status !== 201) throw new Error(`sending ${from} -> ${to}: ${sent.status} ${JSON.stringify(sent.body)}`);
  }
}

/** How many looks at the views the projector has finished since this call (the positive signal that some came and went). */
export function countProjectorLooks(server: TestServer): () => number {
  const views = server.mailbox.projections;
  const binding = views.binding.bind(views);
  let looks = 0;
  views.binding = () => binding().finally(() => (looks += 1));
  return () => looks;
}

/** `act` with a connection of its own to the Redis at `url`, closed after. */
export async function withRedisAdmin<T>(url: string, act: (admin: Redis) => Promise<T>): Promise<T> {
  const admin = new Redis(url);
  try {
    return await act(admin);
  } finally {
    admin.disconnect();
  }
}

/** Sets Redis's memory limit and what it does at the limit (as a managed service's parameter group may). */
export async function limitRedisMemory(admin: Redis, policy: 'noeviction' | 'volatile-lru', maxmemory: number): Promise<void> {
  await admin.config('SET', 'maxmemory-policy', policy);
  await admin.config('SET', 'maxmemory', String(maxmemory));
}

/** No memory limit, and no eviction: Redis as the tests' own instance starts. */
export async function liftRedisMemoryLimit(admin: Redis): Promise<void> {
  await admin.config('SET', 'maxmemory', '0');
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
}
