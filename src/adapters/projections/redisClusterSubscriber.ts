/**
 * The wake subscriber of a Redis Cluster: one plain connection to one node at a time (a PUBLISH reaches every node
 * of a cluster, so any node hears every wake), moved to the next node of the URL whenever it is lost, and dropped
 * when its node stops answering. It is an ordinary connection, so the wake bus sees each loss ('close') and each
 * return ('ready', every channel subscribed again by ioredis) and tells the open wake streams (a `sync`).
 *
 * Not ioredis's own Cluster pub/sub: it moves its subscriber to another node without a word to its owner (the
 * wakes published meanwhile reached nobody and no stream was told), and it stays on a node that is stopped (a frozen
 * VM keeps its sockets open) until a slots refresh drops that node, which on a quiet mailbox may never come.
 */
import net from 'node:net';
import tls from 'node:tls';
import type * as IORedis from 'ioredis';
import type { Redis, RedisOptions } from 'ioredis';
import type { RedisHost } from './redisTopology';
import { CLUSTER_REFRESHER_DISCONNECT_MS } from './clusterRefresherDisconnect';

/** How often the subscriber asks its node for a PING: a node that does not answer within the deadline is left. */
export const CLUSTER_SUBSCRIBER_KEEPALIVE_MS = 1000;

/** A connector (ioredis's extension point) that connects to the next node of `nodes` at each (re)connect. */
function rotatingConnector(io: typeof IORedis, nodes: readonly RedisHost[]) {
  let next = Math.floor(Math.random() * nodes.length); // spread the subscribers of several API nodes
  return class RotatingNodeConnector extends io.AbstractConnector {
    private readonly options: RedisOptions;

    constructor(options: unknown) {
      const given = options as RedisOptions; // ioredis passes the connection's options
      super(given.disconnectTimeout ?? 2000);
      this.options = given;
    }

    connect(): Promise<net.Socket> {
      const node = nodes[next++ % nodes.length];
      this.connecting = true;
      return new Promise((resolve, reject) => {
        process.nextTick(() => {
          if (!this.connecting) return reject(new Error('Connection is closed.'));
          try {
            const address = { host: node.host, port: node.port };
            this.stream = this.options.tls ? tls.connect({ ...this.options.tls, ...address }) : net.createConnection(address);
          } catch (error) {
            return reject(error as Error);
          }
          this.stream.once('error', (error: Error) => (this.firstError = error));
          resolve(this.stream as net.Socket);
        });
      });
    }
  };
}

/**
 * A connection for SUBSCRIBE to the nodes of a cluster, with `options` (deadlines, credentials, TLS, reconnects that
 * never stop). While ready it sends a PING every CLUSTER_SUBSCRIBER_KEEPALIVE_MS; one without an answer by the command
 * deadline drops the connection, which then reconnects to the next node.
 */
export function clusterSubscriber(io: typeof IORedis, nodes: readonly RedisHost[], options: RedisOptions): Redis {
  // It only listens: ended, it is destroyed soon (a node that refused it held the process 2 s: clusterRefresherDisconnect.ts).
  const client = new io.Redis({
    ...options,
    disconnectTimeout: CLUSTER_REFRESHER_DISCONNECT_MS,
    Connector: rotatingConnector(io, nodes),
  });
  let asking = false;
  const keepalive = setInterval(() => {
    if (asking || client.status !== 'ready') return;
    asking = true;
    client
      .ping()
      .catch(() => {
        if (client.status === 'ready') client.disconnect(true); // its node stopped answering: on to the next one
      })
      .finally(() => (asking = false));
  }, CLUSTER_SUBSCRIBER_KEEPALIVE_MS);
  keepalive.unref();
  client.once('end', () => clearInterval(keepalive));
  return client;
}

/**
 * Connects a clusterSubscriber, passing over nodes that are down: each failed attempt reconnects to the next node of
 * the URL (the connector), and only when every node has failed once is the connection refused (the last node's error).
 * A plain connect() gave up at the first node, which the connector picks at random: with one master killed, one
 * subscriber in six failed to open although the cluster served (test/contract/projectionStore.cluster's kill test).
 */
export function connectToSomeNode(client: Redis, nodes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed = 0;
    let lastError: unknown = new Error('Connection is closed.');
    const done = (error?: unknown) => {
      client.off('ready', onReady).off('reconnecting', onReconnecting).off('error', onError).off('end', onEnd);
      if (error === undefined) resolve();
      else reject(error as Error);
    };
    const onReady = () => done();
    const onError = (error: unknown) => (lastError = error);
    const onReconnecting = () => {
      if (++failed >= nodes) done(lastError);
    };
    const onEnd = () => done(lastError);
    client.on('ready', onReady).on('reconnecting', onReconnecting).on('error', onError).once('end', onEnd);
    client.connect().catch((error: unknown) => (lastError = error)); // a node down: the reconnect goes to the next
  });
}
