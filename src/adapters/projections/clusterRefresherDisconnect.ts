/**
 * The mend of sentinelClientsDisconnect.ts, for a Redis Cluster. To learn the slots, ioredis 6.0.0 opens a connection of
 * its own to a node (a duplicate of the node's: the "refresher"), asks CLUSTER SLOTS, and disconnects it; the
 * disconnect arms a timer of `disconnectTimeout` (2 s by default, not unref'd), cleared only when the socket closes
 * afterwards. A node that refused the connection (down, killed, not started yet) has closed it already, so that timer
 * runs out in full: a command whose Redis Cluster could not be reached exited 2 s after its error, and a process that
 * closed its store within 2 s of a slots refresh that met a node down stayed up that long (a test run on Redis Cluster
 * did not exit until then). The refresher only asks: it is given a short one, and one destroyed early has nothing left
 * to say (so is the cluster's wake subscriber, which only listens: redisClusterSubscriber.ts). Without `duplicate` on a
 * node (another ioredis), nothing is changed.
 */
import type { Cluster, Redis, RedisOptions } from 'ioredis';

/**
 * How long a slots refresher or the wake subscriber, once ended, may take to close before it is destroyed (a loopback
 * close: < 1 ms).
 */
export const CLUSTER_REFRESHER_DISCONNECT_MS = 100;

export function shortenClusterRefresherDisconnect(cluster: Cluster): void {
  cluster.on('+node', (node: Redis) => {
    const duplicate = (node as { duplicate?: (override?: Partial<RedisOptions>) => Redis }).duplicate;
    if (typeof duplicate !== 'function') return;
    // Only ioredis duplicates a cluster's node, for its slots refresher (ours never does).
    node.duplicate = (override?: Partial<RedisOptions>) =>
      duplicate.call(node, { ...override, disconnectTimeout: CLUSTER_REFRESHER_DISCONNECT_MS });
  });
}
