/**
 * Which Redis the mailbox talks to, read from one URL (pure, no I/O):
 *
 *   redis://[user:password@]host:6379[/db]                 one node (rediss:// for TLS)
 *   redis+sentinel://[user:password@]h:26379,h:26379/<master>[/db]   a Sentinel group (rediss+sentinel:// for TLS)
 *   redis-cluster://[user:password@]h:6379,h:6379          a Redis Cluster (rediss-cluster:// for TLS)
 *
 * MAILBOX_REDIS_SENTINELS + MAILBOX_REDIS_SENTINEL_NAME and MAILBOX_REDIS_CLUSTER are
 * folded into the same URL by the configuration (config.ts), so every part of the
 * mailbox that asks "is Redis configured, and where" reads one value.
 */
import { MailboxError } from '../../errors';

export interface RedisHost {
  host: string;
  port: number;
}

interface Credentials {
  username?: string;
  password?: string;
  tls: boolean;
}

export type RedisTopology =
  | ({ kind: 'single'; url: string; host: RedisHost } & Credentials)
  | ({ kind: 'sentinel'; sentinels: RedisHost[]; masterName: string; db: number } & Credentials)
  | ({ kind: 'cluster'; nodes: RedisHost[] } & Credentials);

export const REDIS_URL_FORMS =
  'redis://host:6379 (rediss:// for TLS), redis+sentinel://host:26379,host:26379/<master name> ' +
  '(rediss+sentinel:// for TLS) or redis-cluster://host:6379,host:6379 (rediss-cluster:// for TLS)';

const SCHEMES: Record<string, { kind: RedisTopology['kind']; tls: boolean }> = {
  redis: { kind: 'single', tls: false },
  rediss: { kind: 'single', tls: true },
  'redis+sentinel': { kind: 'sentinel', tls: false },
  'rediss+sentinel': { kind: 'sentinel', tls: true },
  'redis-cluster': { kind: 'cluster', tls: false },
  'rediss-cluster': { kind: 'cluster', tls: true },
};

const DEFAULT_PORT = { single: 6379, sentinel: 26379, cluster: 6379 } as const;
const URL_PATTERN = /^([a-z+-]+):\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?$/i;
const HOST_PATTERN = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/;

function invalid(url: string, why: string, variable = 'MAILBOX_REDIS_URL'): MailboxError {
  return new MailboxError(
    'VALIDATION_FAILED',
    'Invalid configuration',
    `${variable} '${redactRedisUrl(url)}' ${why}; use ${REDIS_URL_FORMS}, or leave it unset for views without Redis (MAILBOX_VIEWS: the SQLite views file by default).`,
    { field: variable },
  );
}

/** `host:port,host:port` (IPv6 in brackets); the port defaults per kind. Throws with `why` for the caller's message. */
export function parseHostList(list: string, defaultPort: number): RedisHost[] {
  const hosts = list.split(',').map((part) => part.trim());
  if (hosts.length === 0 || hosts.some((part) => part === '')) throw new Error('needs at least one host:port');
  return hosts.map((part) => {
    const match = HOST_PATTERN.exec(part);
    const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
    if (!match || port < 1 || port > 65535) throw new Error(`has '${part}', which is not host:port`);
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

function decoded(part: string | undefined): string | undefined {
  return part === undefined || part === '' ? undefined : decodeURIComponent(part);
}

/** Reads a Redis URL of any supported kind; a bad one is a VALIDATION_FAILED that shows the valid forms. */
export function parseRedisUrl(url: string, variable = 'MAILBOX_REDIS_URL'): RedisTopology {
  const match = URL_PATTERN.exec(url.trim());
  const scheme = match ? SCHEMES[match[1].toLowerCase()] : undefined;
  if (!match || !scheme) throw invalid(url, 'is not a Redis URL', variable);
  const [, , userInfo, hostPart, path = ''] = match;
  const [username, password] = userInfo === undefined ? [] : userInfo.split(/:(.*)/s, 2);
  const credentials: Credentials = { username: decoded(username), password: decoded(password), tls: scheme.tls };
  let hosts: RedisHost[];
  try {
    hosts = parseHostList(hostPart, DEFAULT_PORT[scheme.kind]);
  } catch (error) {
    throw invalid(url, (error as Error).message, variable);
  }
  const segments = path.split('/').filter((segment) => segment !== '');
  if (scheme.kind === 'single') {
    if (hosts.length > 1) throw invalid(url, 'names several hosts (a single node takes one)', variable);
    if (segments.length > 1 || (segments.length === 1 && !/^\d+$/.test(segments[0])))
      throw invalid(url, 'has a path that is not a database number', variable);
    return { kind: 'single', url: url.trim(), host: hosts[0], ...credentials };
  }
  if (scheme.kind === 'sentinel') {
    if (segments.length === 0 || segments.length > 2 || (segments.length === 2 && !/^\d+$/.test(segments[1])))
      throw invalid(url, 'does not end in the master name the sentinels watch (…/<master name>[/<db>])', variable);
    return {
      kind: 'sentinel',
      sentinels: hosts,
      masterName: decodeURIComponent(segments[0]),
      db: Number(segments[1] ?? 0),
      ...credentials,
    };
  }
  if (segments.length > 0) throw invalid(url, 'has a path (a cluster has no database number nor name)', variable);
  return { kind: 'cluster', nodes: hosts, ...credentials };
}

/** Every host the URL names (for reachability probes and logs). */
export function redisHostsOf(topology: RedisTopology): RedisHost[] {
  if (topology.kind === 'single') return [topology.host];
  return topology.kind === 'sentinel' ? topology.sentinels : topology.nodes;
}

/** The URL with its password hidden, for logs and errors. */
export const redactRedisUrl = (url: string): string => url.replace(/\/\/([^@/]*)@/, '//***@');
