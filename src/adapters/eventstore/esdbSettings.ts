/**
 * Connection settings read from the connection string, with defaults that make
 * a dead or unreachable server fail fast instead of hanging a command:
 *
 * - `defaultDeadline` (ms, default 5000): every call (append, read, catch-up
 *   page) must finish, or for reads make progress, within it; else UNAVAILABLE.
 * - `keepAliveInterval` / `keepAliveTimeout` (ms, default 10000 each, the
 *   client's recommended minimum): gRPC HTTP/2 pings on idle connections, so a
 *   silently dropped connection (NAT, load balancer, crashed node) is noticed
 *   and a long-lived subscription does not wait forever on a dead socket.
 *
 * Missing ones are added to the string the client parses, so the client and
 * the adapter agree on them.
 *
 * Clusters: several hosts (`esdb://n1:2113,n2:2113,n3:2113?tls=true`, the gossip
 * seeds) or DNS discovery (`esdb+discover://cluster.example.com:2113`), and
 * `nodePreference` (leader, the default: writes go there; follower, random or
 * readOnlyReplica). The hosts and the options the cluster depends on are checked
 * here, so a typo is one startup line with the valid form instead of a client
 * that retries discovery forever.
 */
import { MailboxError } from '../../errors';

export interface EsdbSettings {
  connectionString: string;
  deadlineMs: number;
  /** The gossip seeds or the single node, as host:port (the port defaults to 2113). */
  hosts: string[];
  /** esdb+discover:// (DNS or gossip discovery of the cluster's nodes). */
  discover: boolean;
}

const FORMS =
  'use esdb://host:2113?tls=false for one node, esdb://n1:2113,n2:2113,n3:2113?tls=true for a cluster ' +
  '(or esdb+discover://cluster-dns:2113?tls=true), with nodePreference=leader|follower|random|readOnlyReplica if needed';
const NODE_PREFERENCES = ['leader', 'follower', 'random', 'readonlyreplica'];
const HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/;

function invalid(detail: string): MailboxError {
  return new MailboxError('VALIDATION_FAILED', 'Invalid configuration', `MAILBOX_EVENTSTORE_URL: ${detail}; ${FORMS}.`, {
    field: 'MAILBOX_EVENTSTORE_URL',
  });
}

/** The hosts between `scheme://[credentials@]` and the path or query, each checked. */
function hostsOf(url: string): string[] {
  const authority = url
    .replace(/^[a-z+]+:\/\//i, '')
    .replace(/^[^@/?]*@/, '')
    .split(/[/?]/)[0];
  const hosts = authority.split(',').map((host) => host.trim());
  for (const host of hosts) {
    const match = HOST.exec(host);
    const port = match?.[2] === undefined ? 2113 : Number(match[2]);
    if (!match || port < 1 || port > 65535) {
      throw invalid(host === '' ? 'a host is missing (an empty entry in the host list)' : `'${host}' is not host:port`);
    }
  }
  return hosts.map((host) => (HOST.exec(host)![2] === undefined ? `${host}:2113` : host));
}

const DEFAULTS: Record<string, number> = { defaultDeadline: 5000, keepAliveInterval: 10_000, keepAliveTimeout: 10_000 };

/** The client matches option keys case-insensitively and ignores '-' and '_'. */
const flat = (key: string) => key.toLowerCase().replace(/[-_]/g, '');

/** The options the client reads (@eventstore/db-client's parseConnectionString), as it spells them. */
const CLIENT_OPTIONS = [
  'tls',
  'tlsCAFile',
  'userCertFile',
  'userKeyFile',
  'nodePreference',
  'defaultDeadline',
  'keepAliveInterval',
  'keepAliveTimeout',
  'connectionName',
  'maxDiscoverAttempts',
  'discoveryInterval',
  'gossipTimeout',
  'dnsDiscover',
  'throwOnAppendFailure',
  'tlsVerifyCert',
];
const KNOWN_OPTIONS = new Set(CLIENT_OPTIONS.map(flat));

/**
 * An option the client would not apply. It ignores a key it does not know (a misspelled tlsCAFile: TLS without the
 * CA asked for) and `tlsVerifyCert=false` (it verifies anyway), each said only by a console.warn that printed the
 * whole connection string, password and all, on the server's stderr. Refused instead, naming the option alone.
 */
function unappliedOption(query: URLSearchParams): MailboxError | null {
  for (const [key, value] of query.entries()) {
    if (!KNOWN_OPTIONS.has(flat(key)))
      return invalid(
        `the option '${key}' is not one the EventStoreDB client reads (it would be ignored); the options are ${CLIENT_OPTIONS.join(', ')}`,
      );
    if (flat(key) === flat('tlsVerifyCert') && value.trim().toLowerCase() === 'false')
      return invalid(
        "tlsVerifyCert=false has no effect with this client (it verifies the server's certificate anyway): name the " +
          'CA that signed it with tlsCAFile=<path to a PEM file>, or leave the option out',
      );
  }
  return null;
}

export function esdbSettings(url: string): EsdbSettings {
  const queryStart = url.indexOf('?');
  const query = new URLSearchParams(queryStart < 0 ? '' : url.slice(queryStart + 1));
  const unapplied = unappliedOption(query);
  if (unapplied !== null) throw unapplied;
  const given = new Map([...query.entries()].map(([key, value]) => [flat(key), value]));
  const added = Object.entries(DEFAULTS)
    .filter(([key]) => !given.has(flat(key)))
    .map(([key, value]) => `${key}=${value}`);
  const connectionString = added.length === 0 ? url : `${url}${queryStart < 0 ? '?' : '&'}${added.join('&')}`;
  const hosts = hostsOf(url);
  const discover = /^[a-z]+\+discover:\/\//i.test(url);
  const preference = given.get(flat('nodePreference'));
  if (preference !== undefined && !NODE_PREFERENCES.includes(preference.toLowerCase())) {
    throw invalid(`nodePreference '${preference}' is not one of leader, follower, random, readOnlyReplica`);
  }
  const tls = given.get('tls');
  if (tls !== undefined && !['true', 'false'].includes(tls.toLowerCase()))
    throw invalid(`tls must be true or false, got '${tls}'`);
  const deadline = Number(given.get(flat('defaultDeadline')) ?? DEFAULTS.defaultDeadline);
  if (!Number.isInteger(deadline) || deadline <= 0) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Invalid configuration',
      `MAILBOX_EVENTSTORE_URL: defaultDeadline must be a positive number of milliseconds, got '${given.get(flat('defaultDeadline'))}'.`,
      { field: 'MAILBOX_EVENTSTORE_URL' },
    );
  }
  return { connectionString, deadlineMs: deadline, hosts, discover };
}
