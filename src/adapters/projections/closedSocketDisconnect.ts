/**
 * The mend of sentinelClientsDisconnect.ts and clusterRefresherDisconnect.ts, for the mailbox's own connection to one
 * Redis (or to the master Sentinel names). ioredis 6.0.0's disconnect ends the socket and arms a timer of
 * `disconnectTimeout` (2 s by default, not unref'd) that destroys it if it has not closed by then: what it guards is a
 * live socket whose last writes are still going out (a graceful close). It arms it as well for a socket that has closed
 * already (a Redis that refused the connection: nothing listens, or it is down), cleared only by a close that never
 * comes, so the timer runs out in full: a command whose Redis could not be reached (`mailbox projections status` with
 * MAILBOX_REDIS_URL), and a library user, exited 2 s after the error (the wake subscriber's connection did the same).
 * Here a socket closed already is given no wait (there is nothing left to send or to destroy); a live one keeps
 * ioredis's. Without the connector's internals (another ioredis), nothing is changed.
 */
import type { Redis } from 'ioredis';

type Connector = { disconnect?: () => void; disconnectTimeout?: unknown; stream?: { destroyed?: boolean } };

export function endClosedSocketsAtOnce(client: Redis): void {
  const connector = (client as unknown as { connector?: Connector }).connector;
  const disconnect = connector?.disconnect;
  if (connector === undefined || typeof disconnect !== 'function' || typeof connector.disconnectTimeout !== 'number') return;
  connector.disconnect = () => {
    if (connector.stream?.destroyed !== true) return disconnect.call(connector);
    const wait = connector.disconnectTimeout;
    connector.disconnectTimeout = 0;
    try {
      disconnect.call(connector);
    } finally {
      connector.disconnectTimeout = wait;
    }
  };
}
