/**
 * A mend of ioredis 6.0.0, in the one place it is met. To ask the sentinels for the master, and to listen for a
 * failover (failoverDetector), the client opens its own connections to them; each time it disconnects one, it arms a
 * timer of `disconnectTimeout` (2 s by default, not unref'd) that destroys a socket that does not close, cleared only
 * when the socket closes afterwards. It disconnects sockets that have closed already (a sentinel that refused the
 * connection; the failover detector's subscriptions, disconnected at the failover and again at the reconnect after it:
 * redis/ioredis#1362, mended upstream by #2198, in no release yet), and those timers run out in full: a process held
 * up to 2 s after all was closed (a CLI command through Sentinel that could not connect exited 2 s after its error;
 * jest force-exited the workers of the Sentinel tests). Its sentinel connections are given a short one: they only ask
 * and listen, and one destroyed early has nothing left to say. Without that internal method (another ioredis), nothing
 * is changed.
 */
import type { Redis } from 'ioredis';

/** How long a sentinel connection that was ended may take to close before it is destroyed (a loopback close: < 1 ms). */
export const SENTINEL_CLIENT_DISCONNECT_MS = 100;

type SentinelConnector = { connectToSentinel?: (endpoint: unknown, options?: Record<string, unknown>) => unknown };

export function shortenSentinelClientsDisconnect(client: Redis): void {
  const connector = (client as unknown as { connector?: SentinelConnector }).connector;
  const connectToSentinel = connector?.connectToSentinel;
  if (connector === undefined || typeof connectToSentinel !== 'function') return;
  connector.connectToSentinel = (endpoint, options) =>
    connectToSentinel.call(connector, endpoint, { ...options, disconnectTimeout: SENTINEL_CLIENT_DISCONNECT_MS });
}
