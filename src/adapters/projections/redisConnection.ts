/**
 * Redis connections for the projections and the wake bus, on one node, through
 * Sentinel or to a Redis Cluster (redisTopology.ts), and the translation
 * of ioredis errors: an unreachable Redis becomes UNAVAILABLE (503, "retry later"),
 * a script error stays an internal error with its Redis message.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import type * as IORedis from 'ioredis';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { redisVariable, type MailboxConfig } from '../../config';
import { MailboxError, unavailable } from '../../errors';
import { clusterSubscriber, connectToSomeNode } from './redisClusterSubscriber';
import { shortenSentinelClientsDisconnect } from './sentinelClientsDisconnect';
import { shortenClusterRefresherDisconnect } from './clusterRefresherDisconnect';
import { endClosedSocketsAtOnce } from './closedSocketDisconnect';
import { reconnectWhenEndedByIoredis } from './sentinelRevival';
import { parseRedisUrl, redactRedisUrl, redisHostsOf, type RedisTopology } from './redisTopology';
import { closedAtOnce, unaskedError } from './redisGreeting';

/**
 * ioredis, loaded at the first connection: a process that talks to no Redis (the embedded default, every client
 * command) does not pay its ~60 ms load. The types above are free; this is the one value taken from it here.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const ioredis = (): typeof IORedis => require('ioredis') as typeof IORedis;

/** A connection to any topology: both classes share every command the mailbox sends (scripts included). */
export type RedisClient = Redis | Cluster;

/** Credentials and TLS from MAILBOX_REDIS_USERNAME/PASSWORD/SENTINEL_PASSWORD/TLS/TLS_CA_FILE (over the URL's). */
export interface RedisAuthOptions {
  username?: string;
  password?: string;
  sentinelPassword?: string;
  tls?: boolean;
  tlsCaFile?: string;
}

export interface RedisConnectionOptions extends RedisAuthOptions {
  /** Shown in CLIENT LIST, to tell the projector, the readers and the subscriber apart. */
  name: string;
  /**
   * Off by default: each command is written as soon as it is issued, so Redis
   * runs one apply script while the next is planned (auto-pipelining would hold
   * every call of a batch until the end of the tick; measured: ~31k vs ~51k
   * events/s in a rebuild). Commands issued together still share the socket.
   */
  autoPipelining?: boolean;
  /** The deadline of every command, and of connecting (MAILBOX_REDIS_TIMEOUT_MS). */
  timeoutMs?: number;
  /** The variable that names this Redis, for the remedy of a refused handshake (default MAILBOX_REDIS_URL). */
  variable?: string;
  /**
   * The credentials come from the URL alone (the heartbeat's nudge Redis, MAILBOX_HEARTBEAT_REDIS_URL): a refused
   * handshake's remedy then names the URL, not MAILBOX_REDIS_PASSWORD, which is the mailbox's own Redis's.
   */
  urlCredentialsOnly?: boolean;
  /**
   * A connection for SUBSCRIBE only (the wake subscriber): on a Cluster, one connection to one node at a time, moved to
   * another when lost or when its node stops answering (redisClusterSubscriber.ts); elsewhere an ordinary connection.
   */
  subscriber?: boolean;
}

export const DEFAULT_REDIS_TIMEOUT_MS = 1000;
/** Reconnect attempts never stop, and come at least this often, so that recovery needs no restart and is quick. */
const MAX_RECONNECT_DELAY_MS = 500;
/** ioredis's own disconnectTimeout: how long an ended connection may take to close before it is destroyed. */
const IOREDIS_DISCONNECT_TIMEOUT_MS = 2000;
/**
 * Rounds over every sentinel before the first connection attempt fails, so that a mailbox started
 * with no sentinel reachable says so at once instead of waiting. Only the first: ioredis ends a
 * client for good when a reconnect's sentinel rounds give up (Redis.js sets status 'end', and
 * nothing reconnects it), so once connected the rounds never stop.
 */
const FIRST_CONNECT_SENTINEL_ROUNDS = 3;

/** Throws VALIDATION_FAILED (with the valid forms) unless the URL names a supported Redis topology. */
export function validateRedisUrl(url: string, variable = 'MAILBOX_REDIS_URL'): void {
  parseRedisUrl(url, variable);
}

/** The connection options of a configuration (everything but the connection's name). */
export function redisOptionsOf(config: MailboxConfig): Omit<RedisConnectionOptions, 'name'> {
  return {
    timeoutMs: config.redisTimeoutMs,
    username: config.redisUsername,
    password: config.redisPassword,
    sentinelPassword: config.redisSentinelPassword,
    tls: config.redisTls,
    tlsCaFile: config.redisTlsCaFile,
    variable: redisVariable(config),
  };
}

/** Cluster in the URL: the hash-tagged layout (one script per tag) is then required, not a choice. */
export const isClusterUrl = (url: string): boolean => parseRedisUrl(url).kind === 'cluster';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The CA certificate(s) of MAILBOX_REDIS_TLS_CA_FILE. A file that is missing, a directory or unreadable was read only
 * when the first connection was made (a stack trace from `serve`, INTERNAL ENOENT from the other commands), and one
 * holding no certificate Node can parse failed every handshake, said as "Redis is unreachable": each is
 * VALIDATION_FAILED naming the variable and the file (startupChecks.ts checks it before anything is created).
 */
export function readRedisCaFile(file: string): Buffer {
  const variable = 'MAILBOX_REDIS_TLS_CA_FILE';
  const refused = (why: string) =>
    new MailboxError(
      'VALIDATION_FAILED',
      'Invalid configuration',
      `${variable}='${file}' ${why}: set ${variable} to a PEM file with the CA certificate(s) of the Redis servers, ` +
        'or unset it for the system CAs.',
      { field: variable },
    );
  let ca: Buffer | undefined;
  let unreadable = '';
  try {
    ca = fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    unreadable =
      code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? String(error)})`;
  }
  if (ca === undefined) throw refused(unreadable);
  const certificates = ca.toString('latin1').match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) throw refused('holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  let unparsed = '';
  for (const [index, certificate] of certificates.entries()) {
    try {
      new X509Certificate(certificate);
    } catch (error) {
      unparsed ||= `holds a certificate that cannot be parsed (certificate ${index + 1} of ${certificates.length}: ${
        (error as Error).message
      })`;
    }
  }
  if (unparsed !== '') throw refused(unparsed);
  return ca;
}

function tlsOptions(topology: RedisTopology, options: RedisConnectionOptions): RedisOptions['tls'] {
  if (!topology.tls && !options.tls) return undefined;
  return options.tlsCaFile === undefined ? {} : { ca: readRedisCaFile(options.tlsCaFile) };
}

/**
 * Fail fast, every time, on every topology: a command issued while disconnected is refused at once
 * (no offline queue to wait in), one that gets no reply (Redis stopped, network gone) fails at the
 * deadline, and one in flight when the connection drops is not resent. Callers answer 503; the
 * projector's runner retries its batch from the checkpoint, so no write is lost by not queueing it here.
 */
function nodeOptions(topology: RedisTopology, options: RedisConnectionOptions): RedisOptions {
  const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  const username = options.username ?? topology.username;
  const password = options.password ?? topology.password;
  return {
    lazyConnect: true,
    connectionName: options.name,
    enableAutoPipelining: options.autoPipelining ?? false,
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: Math.max(timeoutMs, 1000),
    // Keep reconnecting for as long as the outage lasts (the subscriber resubscribes on reconnect).
    retryStrategy: (attempt) => Math.min(attempt * 50, MAX_RECONNECT_DELAY_MS),
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    ...(tlsOptions(topology, options) === undefined ? {} : { tls: tlsOptions(topology, options) }),
  };
}

function createClient(topology: RedisTopology, options: RedisConnectionOptions): RedisClient {
  const node = nodeOptions(topology, options);
  const { Cluster, Redis } = ioredis();
  if (topology.kind === 'single') {
    const client = new Redis(topology.url, node);
    endClosedSocketsAtOnce(client); // a refused connection held the process 2 s after its error: see there
    return client;
  }
  if (topology.kind === 'sentinel') {
    let connectedOnce = false;
    const client = new Redis({
      ...node,
      sentinels: topology.sentinels,
      name: topology.masterName,
      db: topology.db,
      role: 'master',
      ...(options.sentinelPassword === undefined ? {} : { sentinelPassword: options.sentinelPassword }),
      ...(node.tls === undefined ? {} : { enableTLSForSentinelMode: true, sentinelTLS: node.tls }),
      // Startup fails loudly after a few rounds over the sentinels; a reconnect never gives up (see above).
      sentinelRetryStrategy: (round) =>
        !connectedOnce && round > FIRST_CONNECT_SENTINEL_ROUNDS ? null : Math.min(round * 100, MAX_RECONNECT_DELAY_MS),
      // A sentinel that accepts connections but answers nothing (stopped, overloaded) is passed over at the
      // deadline; without one, asking it for the master waited forever and the client never reconnected.
      sentinelCommandTimeout: node.commandTimeout,
      // Follow +switch-master at once instead of waiting for the old master's connection to fail.
      failoverDetector: true,
      // At +switch-master the old master's connection is ended; one that does not close (a paused master) was destroyed
      // after 2 s (ioredis's default), and one closed already (a killed master) held the process as long: it gets as
      // long as a command gets to answer, never longer than that default (sentinelClientsDisconnect.ts says the same of
      // the sentinels' connections).
      disconnectTimeout: Math.min(node.commandTimeout ?? IOREDIS_DISCONNECT_TIMEOUT_MS, IOREDIS_DISCONNECT_TIMEOUT_MS),
    });
    client.once('ready', () => {
      connectedOnce = true;
    });
    endClosedSocketsAtOnce(client); // the master's connection, refused or killed: see there
    shortenSentinelClientsDisconnect(client); // its sentinel connections held the process 2 s after close: see there
    reconnectWhenEndedByIoredis(client, MAX_RECONNECT_DELAY_MS); // a failover during a reconnect ended it for good: see there
    return client;
  }
  if (options.subscriber) return clusterSubscriber(ioredis(), topology.nodes, node);
  const cluster: ClusterOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    enableAutoPipelining: node.enableAutoPipelining,
    // Writes and reads go to masters: a replica may lag, and the views promise read-your-writes.
    scaleReads: 'master',
    slotsRefreshTimeout: node.connectTimeout,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    clusterRetryStrategy: (attempt) => Math.min(attempt * 50, MAX_RECONNECT_DELAY_MS),
    redisOptions: node,
    ...(node.tls === undefined ? {} : { dnsLookup: (address, callback) => callback(null, address) }),
  };
  const client = new Cluster(topology.nodes, cluster);
  shortenClusterRefresherDisconnect(client); // its slots refreshers held the process 2 s after close: see there
  return client;
}

function describeTopology(topology: RedisTopology, url: string): string {
  if (topology.kind === 'single') return `Redis at ${redactRedisUrl(url)}`;
  const hosts = redisHostsOf(topology)
    .map(({ host, port }) => `${host}:${port}`)
    .join(',');
  return topology.kind === 'sentinel'
    ? `Redis master '${topology.masterName}' via sentinels ${hosts}`
    : `Redis Cluster at ${hosts}`;
}

/**
 * Replies to a connection's handshake that no retry changes: credentials refused or missing (AUTH, HELLO), a database
 * the server does not have (SELECT).
 */
const REFUSED_HANDSHAKE = /^(WRONGPASS|NOAUTH|NOPERM)\b|invalid (username-)?password|DB index is out of range/i;

/**
 * A sentinel's answer that it watches no master of the name asked (a typo, another deployment's name): ioredis words it
 * "All sentinels are unreachable. ... Last error: ERR No such master with that name", a plain Error.
 */
const UNKNOWN_MASTER = /No such master with that name/i;

/** A node of another kind than the URL names (see topologyMismatch): no retry changes that either. */
class TopologyMismatch extends Error {
  override readonly name = 'TopologyMismatch';
}

/** A node's answer to CLUSTER SLOTS when it is no Cluster node. */
const CLUSTER_DISABLED = /cluster support disabled/i;

export const isHandshakeRefusal = (error: unknown): error is Error =>
  error instanceof Error &&
  ((error.name === 'ReplyError' && REFUSED_HANDSHAKE.test(error.message)) ||
    UNKNOWN_MASTER.test(error.message) ||
    error.name === 'TopologyMismatch');

/**
 * A Cluster named as one node (redis://), or one node named as a Cluster (redis-cluster://): a mistake no retry mends.
 * Found walking the stack: redis:// on a Cluster node stopped `mailbox serve` with a stack trace, exit code 1 ("Redis
 * projections is unavailable; retry later": the node answered MOVED), and redis-cluster:// on a lone node was waited
 * out as unreachable ("Failed to refresh slots cache"), then "start it".
 */
function topologyMismatch(topology: RedisTopology, variable: string, clusterNode: boolean): TopologyMismatch {
  return clusterNode
    ? new TopologyMismatch(
        `is a node of a Redis Cluster (cluster_enabled:1), and a URL of one node reaches only the keys of that node's ` +
          `slots: name the Cluster's nodes instead, ${variable === 'MAILBOX_REDIS_URL' ? 'MAILBOX_REDIS_URL=redis-cluster://host:6379,host:6379' : `redis-cluster://host:6379,host:6379 in ${variable}`} ` +
          'or MAILBOX_REDIS_CLUSTER=host:6379,host:6379',
      )
    : new TopologyMismatch(
        `${topology.kind === 'cluster' && topology.nodes.length > 1 ? 'are no Redis Cluster nodes' : 'is no Redis Cluster node'} ` +
          `(ERR This instance has cluster support disabled): for one Redis node, ` +
          (variable === 'MAILBOX_REDIS_CLUSTER'
            ? 'unset MAILBOX_REDIS_CLUSTER and set MAILBOX_REDIS_URL=redis://host:6379'
            : `give ${variable} as redis://host:6379`),
      );
}

/** Whether the node behind `client` runs in Cluster mode (INFO cluster); false when it does not say (an ACL without INFO). */
async function isClusterNode(client: RedisClient): Promise<boolean> {
  const info = await client.info('cluster').catch(() => '');
  return /^cluster_enabled:1\b/m.test(info);
}

/**
 * Opens a connection and waits until it is ready, failing loudly (UNAVAILABLE) if Redis cannot be reached. A handshake
 * Redis refused is the error's cause: ioredis says only "Connection is closed" for refused credentials, and a SELECT
 * of a database the server does not have fails beside a connection that is ready, on database 0.
 */
export async function connectRedis(url: string, options: RedisConnectionOptions): Promise<RedisClient> {
  const topology = parseRedisUrl(url);
  const client = createClient(topology, options);
  let refusal: Error | undefined;
  let socketError: Error | undefined;
  // Reconnects are logged by their owners; without a listener ioredis would print to stderr.
  const variable = options.variable ?? 'MAILBOX_REDIS_URL';
  client.on('error', (error: unknown) => {
    const lastNodeError = (error as { lastNodeError?: { message?: unknown } } | null)?.lastNodeError?.message;
    if (refusal === undefined && typeof lastNodeError === 'string' && CLUSTER_DISABLED.test(lastNodeError))
      refusal = topologyMismatch(topology, variable, false);
    else if (refusal === undefined && isHandshakeRefusal(error)) refusal = error;
    else if (typeof (error as Error | null)?.message === 'string') socketError ??= error as Error; // not instanceof: another realm's Error
  });
  try {
    if (options.subscriber && topology.kind === 'cluster') await connectToSomeNode(client as Redis, topology.nodes.length);
    else await client.connect();
  } catch (error) {
    client.disconnect();
    if (refusal === undefined) {
      const cause = socketError ?? error;
      // A server that closed the connection at once may have said why first (maxclients): said, not "unreachable".
      const said =
        topology.kind === 'single' && !topology.tls && closedAtOnce(cause)
          ? await unaskedError(topology.host.host, topology.host.port)
          : null;
      throw said === null
        ? unreachable(describeTopology(topology, url), cause, options)
        : closedWithError(describeTopology(topology, url), said, cause, options);
    }
    const watched =
      topology.kind === 'sentinel' && UNKNOWN_MASTER.test(refusal.message) ? await mastersWatched(topology, options) : null;
    throw handshakeRefused(describeTopology(topology, url), refusal, options, watched);
  }
  // The heartbeat's own nudge Redis (urlCredentialsOnly) only publishes, which any Cluster node takes.
  if (refusal === undefined && topology.kind === 'single' && !options.urlCredentialsOnly && (await isClusterNode(client)))
    refusal = topologyMismatch(topology, variable, true);
  if (refusal !== undefined) {
    client.disconnect();
    throw handshakeRefused(describeTopology(topology, url), refusal, options);
  }
  return client;
}

/**
 * UNAVAILABLE for a Redis that answered a new connection with an error and closed it (maxclients reached): it runs,
 * so "start it" was wrong; what it said is the cause, and a start goes on retrying (other clients may leave).
 */
function closedWithError(
  where: string,
  said: string,
  cause: unknown,
  { variable = 'MAILBOX_REDIS_URL' }: Pick<RedisConnectionOptions, 'variable'>,
) {
  const full = /max number of clients/i.test(said) ? ' (its maxclients is reached: raise it, or close other clients)' : '';
  const error = new MailboxError(
    'UNAVAILABLE',
    'Service unavailable',
    `${where} refuses new connections: it answered '${said}' and closed the connection${full}. Check the server, or fix ${variable}. Nothing was read or written.`,
    { field: variable },
  );
  (error as Error).cause = new Error(said, { cause });
  return error;
}

/**
 * UNAVAILABLE for a Redis that could not be connected to at all, saying where, why (the socket's error: ioredis itself
 * says only "Connection is closed") and what to check. It said "Redis at ... is unavailable; retry later (the request was
 * not applied)": no variable, and no request to speak of for `mailbox audit verify` or `mailbox projections status`.
 * The driver's error stays the cause (startupBackends.ts words the server's own line from it).
 */
function unreachable(
  where: string,
  cause: unknown,
  { variable = 'MAILBOX_REDIS_URL' }: Pick<RedisConnectionOptions, 'variable'>,
) {
  const message = (cause as Error | null)?.message;
  const why = typeof message === 'string' ? message.replace(/\.$/, '') : String(cause);
  const error = new MailboxError(
    'UNAVAILABLE',
    'Service unavailable',
    `${where} is unreachable (${why}): start it, or fix ${variable}. Nothing was read or written.`,
    { field: variable },
  );
  (error as Error).cause = cause;
  return error;
}

/** UNAVAILABLE (as any Redis that does not serve), saying what Redis refused and what to set; the reply is its cause. */
function handshakeRefused(
  where: string,
  refusal: Error,
  { variable = 'MAILBOX_REDIS_URL', urlCredentialsOnly = false }: Pick<RedisConnectionOptions, 'variable' | 'urlCredentialsOnly'>,
  watched: readonly string[] | null = null,
): MailboxError {
  const reply = refusal.message.replace(/\.$/, '');
  let message: string;
  if (refusal instanceof TopologyMismatch) {
    message = `${where} ${reply}.`;
  } else if (UNKNOWN_MASTER.test(reply)) {
    const known =
      watched === null
        ? 'their `SENTINEL MASTERS` lists them'
        : watched.length === 0
          ? 'they watch none yet'
          : `they watch ${watched.map((master) => `'${master}'`).join(', ')}`;
    const remedy =
      variable === 'MAILBOX_REDIS_SENTINELS'
        ? `set MAILBOX_REDIS_SENTINEL_NAME to one they watch (${known})`
        : `end ${variable} with one they watch (redis+sentinel://host:26379/<master name>; ${known})`;
    message = `${where}: the sentinels watch no master of that name (ERR No such master with that name): ${remedy}.`;
  } else if (/DB index is out of range/i.test(reply)) {
    message =
      `${where} has no such database (${reply}): give ${variable} a database the server has (0 up to its ` +
      "'databases' setting less one: 0..15 by default), or none for database 0.";
  } else {
    // NOAUTH's text goes on about HELLO's arguments (ioredis says HELLO first): its code says it all.
    const what = /^NOAUTH\b/.test(reply) ? 'asks for a password (NOAUTH)' : `refused the credentials (${reply})`;
    message = urlCredentialsOnly
      ? `${where} ${what}: give its password (and ACL user, if not 'default') in ${variable} ` +
        "(redis://user:password@host:6379); MAILBOX_REDIS_PASSWORD is for the mailbox's own Redis."
      : `${where} ${what}: set MAILBOX_REDIS_PASSWORD (or MAILBOX_REDIS_PASSWORD_FILE) to its password, and ` +
        `MAILBOX_REDIS_USERNAME to its ACL user if not 'default', or give them in ${variable} (redis://user:password@host:6379).`;
  }
  const error = new MailboxError('UNAVAILABLE', 'Redis refused the connection', message);
  (error as Error).cause = refusal;
  return error;
}

/**
 * The names of the masters the sentinels watch (`SENTINEL MASTERS` of the first that answers), for the refusal of a name
 * they do not know; null when none answers. One short-lived connection per sentinel asked, never retried.
 */
async function mastersWatched(
  topology: Extract<RedisTopology, { kind: 'sentinel' }>,
  options: RedisConnectionOptions,
): Promise<string[] | null> {
  const node = nodeOptions(topology, options);
  const { Redis } = ioredis();
  for (const { host, port } of topology.sentinels) {
    const sentinel = new Redis({
      host,
      port,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      commandTimeout: node.commandTimeout,
      connectTimeout: node.connectTimeout,
      ...(options.sentinelPassword === undefined ? {} : { password: options.sentinelPassword }),
      ...(node.tls === undefined ? {} : { tls: node.tls }),
    });
    sentinel.on('error', () => undefined); // the answer, or its absence, is all that is wanted
    try {
      await sentinel.connect();
      const masters = (await sentinel.call('SENTINEL', 'MASTERS')) as unknown[];
      return masters.flatMap((fields) => {
        const list = Array.isArray(fields) ? fields.map(String) : [];
        const at = list.indexOf('name');
        return at >= 0 && at + 1 < list.length ? [list[at + 1]] : [];
      });
    } catch {
      // the next sentinel
    } finally {
      sentinel.disconnect();
    }
  }
  return null;
}

export const redactUrl = redactRedisUrl;

/**
 * Closes a connection for good: QUIT (what was sent is answered), then disconnect. Through Sentinel, QUIT alone left
 * the failover detector's subscriptions to the sentinels open (ioredis closes them only on disconnect), and those
 * sockets kept the process alive after everything else had closed (found as a test run that did not exit).
 */
export async function closeRedis(client: RedisClient): Promise<void> {
  await client.quit().catch(() => undefined);
  client.disconnect();
}

/**
 * Replies that mean "this node cannot serve right now" (cluster resharding or failing over, a
 * replica promoted late, a node still loading): retry later, like a lost connection.
 */
const TRANSIENT_REPLY = /^(CLUSTERDOWN|TRYAGAIN|MOVED|ASK|READONLY|LOADING|MASTERDOWN|NOREPLICAS|UNBLOCKED)\b/;

/**
 * Deletes every key matching a pattern, in batches (SCAN + UNLINK: Redis stays responsive). On a
 * Cluster each master is scanned (SCAN sees one node's keys) and keys are unlinked one per command,
 * pipelined on that node, since one UNLINK may not name keys of several slots.
 */
export async function unlinkMatching(client: RedisClient, pattern: string): Promise<void> {
  const { Cluster } = ioredis(); // a client exists: ioredis is loaded already
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (found.length > 0 && client instanceof Cluster) {
        const pipeline = node.pipeline();
        for (const key of found) pipeline.unlink(key);
        const failed = (await pipeline.exec())?.find(([error]) => error !== null);
        if (failed) throw failed[0];
      } else if (found.length > 0) await node.unlink(...found);
      cursor = next;
    } while (cursor !== '0');
  }
}

/** Translates an ioredis failure met by `what` into the mailbox's errors. */
export function translateRedisError(what: string, error: unknown): Error {
  if (error instanceof MailboxError) return error;
  // A full Redis under noeviction refuses writes until there is room: an outage to retry, said once by the loops that
  // retry (support/storeOutage.ts), not a new failure with its stack at each retry of the projector for as long as it
  // stays full. The words keep the reason, which readiness and the log show.
  if (error instanceof Error && error.name === 'ReplyError' && /^OOM\b/.test(error.message))
    return unavailable(`${what} (Redis is out of memory: maxmemory reached, writes refused until there is room)`, error);
  if (error instanceof Error && error.name === 'ReplyError' && !TRANSIENT_REPLY.test(error.message)) {
    return new Error(`${what}: Redis replied with an error: ${error.message}`);
  }
  return unavailable(what, error);
}

/** Runs a Redis operation, translating its failure. */
export async function redisCall<T>(what: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateRedisError(what, error);
  }
}
