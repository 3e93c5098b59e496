/**
 * A mend of ioredis 6.0.0 for clients through Sentinel. A reconnect asks a sentinel for the master
 * (SentinelConnector.connect awaits resolve()); when the failover detector's +switch-master disconnects the connector
 * during that wait, the connect rejects with 'Connection is closed.', and Redis.connect's handler of that rejection sets
 * the client's status to 'end': no retryStrategy is asked and nothing connects it again, so every command after it fails
 * with 'Connection is closed.' for the life of the process. Met after a Sentinel failover on a loaded machine (2 cores,
 * load 12; 1 failover in 4): the projector's views connection ended so while its lease connection lived on, so it
 * renewed its lease and applied nothing, and every send answered VIEWS_LAGGING for good, until a restart.
 *
 * A client that ends without its owner having closed it (quit, or disconnect without reconnect) is connected again after
 * `retryMs`, as its retryStrategy would have done, and again each time it ends so. Armed once the client was ready: a
 * first connection that fails is its owner's to report (connectRedis fails loudly).
 */
import type { Redis } from 'ioredis';

export function reconnectWhenEndedByIoredis(client: Redis, retryMs: number): void {
  let closedByOwner = false;
  const { quit, disconnect } = client;
  client.quit = ((...args: Parameters<Redis['quit']>) => {
    closedByOwner = true;
    return quit.apply(client, args);
  }) as Redis['quit'];
  client.disconnect = (reconnect = false) => {
    if (!reconnect) closedByOwner = true;
    disconnect.call(client, reconnect);
  };
  client.once('ready', () => {
    client.on('end', () => {
      if (closedByOwner) return;
      const timer = setTimeout(() => {
        if (!closedByOwner && client.status === 'end') client.connect().catch(() => undefined); // a failure ends it again
      }, retryMs);
      timer.unref();
    });
  });
}
