/**
 * At startup, Redis and EventStoreDB may still be starting (docker compose starts them side by
 * side with the server). Probe each one, retrying with backoff for MAILBOX_STARTUP_RETRY_MS and
 * saying so in the log, then give up with one StartupError line that names the host.
 */
import type { Logger } from 'pino';
import { redisVariable, type MailboxConfig } from './config';
import net from 'node:net';
import { causeOf, isMailboxError, needsOperator, unavailable, type MailboxError } from './errors';
import { StartupError, StartupInterrupted } from './startupError';
import { sleep } from './support/retry';
import { esdbHosts } from './startupChecks';
import {
  connectRedis,
  isHandshakeRefusal,
  redactUrl,
  redisOptionsOf,
  type RedisConnectionOptions,
} from './adapters/projections/redisConnection';
import { parseRedisUrl, redisHostsOf } from './adapters/projections/redisTopology';
import { acceptsAnyPassword, anyPasswordWarning } from './adapters/projections/redisOpenAuth';
import { isEsdbUrl } from './adapters/eventstore/esdbClientCompat';
import { EsdbEventStore } from './adapters/eventstore/esdbEventStore';
import { asksForTls, esdbFailureCause } from './adapters/eventstore/esdbConnectFailure';
import { esdbPortMistake } from './adapters/eventstore/esdbPortCheck';
import { esdbSettings } from './adapters/eventstore/esdbSettings';

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5000;

/** Seconds to a tenth: MAILBOX_STARTUP_RETRY_MS=600 read as 'up to 1s' and a give-up after 0.6 s as 'in 1s'. */
const inSeconds = (ms: number): string => `${Math.round(ms / 100) / 10}s`;

interface Backend {
  name: string;
  variable: string;
  /** Resolves once the server answers; `logger`: for what the answer warns of (the server still serves). */
  probe(logger: Logger): Promise<void>;
  /** The give-up line's words on the driver's error (default: briefCause). */
  cause?(raw: string): string;
}

/**
 * gRPC and ioredis wrap the socket error in long text: keep 'ECONNREFUSED 127.0.0.1:2113' when it is there. An address
 * is host:port: gRPC's 'ECONNRESET (2026-12-05T06:18:12.828Z)' was kept as 'ECONNRESET (2026-12-05T06:18:12.828Z', its
 * parenthesis left open in the line.
 */
export const briefCause = (cause: string): string =>
  (/\b(E[A-Z]{4,} [^\s,;()]+:\d+|E[A-Z]{4,})/.exec(cause)?.[1] ?? cause).replace(/\.$/, '');

/** A plain TCP connect first: ioredis reports a refused connection only as "Connection is closed". */
function tcpReachable(host: string, port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: host || '127.0.0.1', port });
    socket.setTimeout(5000, () => socket.destroy(Object.assign(new Error(`ETIMEDOUT ${host}:${port}`), { code: 'ETIMEDOUT' })));
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (error) => reject(unavailable(what, error)));
  });
}

async function waitFor(backend: Backend, retryMs: number, logger: Logger, interrupted?: AbortSignal): Promise<void> {
  const started = Date.now();
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await backend.probe(logger);
      if (attempt > 1) logger.info({ attempt }, `${backend.name} is reachable`);
      return;
    } catch (error) {
      if (!isMailboxError(error) || error.code !== 'UNAVAILABLE') throw error;
      // A refusal no wait mends (the node refused the mailbox's credentials, or a right it needs: reading $all): one
      // line at once, naming it and the remedy. It was waited out for MAILBOX_STARTUP_RETRY_MS, then said to be
      // unreachable ("start it"), when it had answered every time.
      if (needsOperator(error)) throw refusedByOperatorRule(backend, error);
      const waited = Date.now() - started;
      if (waited >= retryMs) {
        // The driver's error is the MailboxError's cause (never in its envelope, which a response would carry): its
        // envelope's message, read instead, said 'Redis at ... is unavailable; retry later (the request was not applied)'.
        const brief = briefCause(causeOf(error) ?? error.message);
        const cause = backend.cause ? backend.cause(brief) : brief;
        throw new StartupError(
          `${backend.name} is unreachable (${cause}) after ${attempt} attempt(s) in ${inSeconds(waited)}: ` +
            `start it, or fix ${backend.variable} (MAILBOX_STARTUP_RETRY_MS=${retryMs} sets how long to wait).`,
          { variable: backend.variable },
          { cause: error },
        );
      }
      // The last wait is cut to what is left, so the last try comes when the time is up (it gave up a backoff step
      // early: up to 5 s of a 30 s budget, half of a 4 s one).
      const wait = Math.min(delay, retryMs - waited);
      logger.warn(
        { attempt, retryInMs: wait, cause: causeOf(error) },
        `${backend.name} is unreachable; retrying for up to ${inSeconds(retryMs)} (MAILBOX_STARTUP_RETRY_MS)`,
      );
      await sleep(wait, interrupted); // ends at once when the process is asked to stop
      if (interrupted?.aborted) throw new StartupInterrupted(`while waiting for ${backend.name}`);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}

/** The refusal's own words (without "the request was not applied": there was none) and its remedy, as one line. */
function refusedByOperatorRule(backend: Backend, error: MailboxError): StartupError {
  const operatorAction = String(error.envelope.operatorAction);
  const what = error.message.replace(/[;,.]?\s*the request was not applied\.?$/i, '');
  return new StartupError(
    `Operator action needed: ${backend.name} answered, and refused: ${what}. ${operatorAction}`,
    { variable: backend.variable, operatorAction },
    { cause: error, refusal: { error: 'Operator action needed', code: 'UNAVAILABLE' } },
  );
}

function backendsOf(config: MailboxConfig): Backend[] {
  const backends: Backend[] = [];
  const esdbUrl = config.eventStoreUrl;
  if (esdbUrl !== undefined && isEsdbUrl(esdbUrl)) {
    backends.push({
      name: `EventStoreDB at ${esdbHosts(esdbUrl)}`,
      variable: 'MAILBOX_EVENTSTORE_URL',
      cause: (raw) => esdbFailureCause(raw, esdbUrl),
      async probe() {
        // A URL that no wait mends (TLS asked of a plain node, a port that is not gRPC): refused at once, before the
        // client's TLS attempt (and its DEP0123 warning).
        const mistake = await esdbUrlMistake(esdbUrl);
        if (mistake !== null) throw new StartupError(mistake, { variable: 'MAILBOX_EVENTSTORE_URL' });
        const store = EsdbEventStore.connect(esdbUrl);
        try {
          await store.headPosition();
        } finally {
          await store.close().catch(() => undefined);
        }
      },
    });
  }
  const redisUrl = config.redisUrl;
  if (redisUrl !== undefined) {
    backends.push(redisBackend(redisUrl, redisVariable(config), { name: 'mailbox-startup-probe', ...redisOptionsOf(config) }));
  }
  return backends;
}

/** One node named (a cluster's seeds and discovery are left to the client): what is wrong with its URL, if it is plain. */
async function esdbUrlMistake(url: string): Promise<string | null> {
  const { hosts, discover } = esdbSettings(url);
  return hosts.length === 1 && !discover ? esdbPortMistake(hosts[0], asksForTls(url)) : null;
}

function redisBackend(redisUrl: string, variable: string, options: RedisConnectionOptions): Backend {
  return {
    name: `Redis at ${redactUrl(redisUrl)}`,
    variable,
    async probe(logger) {
      // One reachable host is enough: Sentinel and Cluster clients find the others from it.
      const hosts = redisHostsOf(parseRedisUrl(redisUrl));
      await Promise.any(hosts.map(({ host, port }) => tcpReachable(host, port, `Redis at ${redactUrl(redisUrl)}`))).catch(
        (all: AggregateError) => Promise.reject(all.errors[0]),
      );
      const client = await connectRedis(redisUrl, { ...options, variable }).catch((error: unknown) => {
        // Redis answered and refused the handshake: no retry changes that (it was retried for
        // MAILBOX_STARTUP_RETRY_MS, then said to be unreachable: "start it").
        const refusal = (error as { cause?: unknown }).cause;
        throw isHandshakeRefusal(refusal) ? new StartupError((error as Error).message, { variable }, { cause: refusal }) : error;
      });
      try {
        const { username, password } = { ...credentialsOf(redisUrl), ...definedOnly(options) };
        if (password !== undefined && (await acceptsAnyPassword(client, username)))
          logger.warn({ redis: redactUrl(redisUrl), variable }, anyPasswordWarning(`Redis at ${redactUrl(redisUrl)}`, username));
      } finally {
        client.disconnect();
      }
    },
  };
}

/** The URL's own credentials (an empty user name, as in redis://:password@host, is the default user). */
function credentialsOf(url: string): { username?: string; password?: string } {
  const { username, password } = parseRedisUrl(url);
  return { username: username || undefined, password };
}

/** The options' credentials (MAILBOX_REDIS_USERNAME/PASSWORD), which win over the URL's, where set. */
const definedOnly = ({ username, password }: RedisConnectionOptions) => ({
  ...(username === undefined ? {} : { username }),
  ...(password === undefined ? {} : { password }),
});

/**
 * The heartbeat's own nudge Redis (--redis-url / MAILBOX_HEARTBEAT_REDIS_URL), checked at start as the mailbox's is:
 * waited for while it starts, and a handshake it refuses (credentials, a database it does not have) said at once in
 * one line. It was first met at the first nudge, as a failed publish. Its credentials are those of its URL alone.
 */
export async function waitForNudgeRedis(url: string, config: MailboxConfig, logger: Logger, interrupted?: AbortSignal) {
  const backend = redisBackend(url, NUDGE_REDIS_VARIABLE, { name: 'mailbox-heartbeat-probe', urlCredentialsOnly: true });
  await waitFor(backend, config.startupRetryMs, logger, interrupted);
}
const NUDGE_REDIS_VARIABLE = '--redis-url / MAILBOX_HEARTBEAT_REDIS_URL';

/** Resolves once every configured server answers; a StartupError when one stays unreachable for retryMs. */
export async function waitForBackends(config: MailboxConfig, logger: Logger, interrupted?: AbortSignal): Promise<void> {
  for (const backend of backendsOf(config)) await waitFor(backend, config.startupRetryMs, logger, interrupted);
}
