/**
 * Real Redis topologies for tests, all on free loopback ports and stopped after the suite:
 * - a Redis Cluster: 3 masters + 3 replicas (six redis-server processes), created with
 *   `redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`;
 * - a Sentinel group: 1 master, 1 replica and 3 sentinels (`redis-server <conf> --sentinel`).
 * Each start waits for a positive signal (cluster state ok with every slot served and every
 * replica in sync; sentinels that agree on the master and know the replica and each other),
 * and so does each failover helper (a replica promoted and serving).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, spawnRedis, stopChild } from './redisServer';

const run = promisify(execFile);
const MASTER_NAME = 'mymaster';

interface Node {
  port: number;
  child: ChildProcess;
}

/** Polls `check` (every 50 ms) until it holds, or fails with what was last seen. */
async function until(what: string, check: () => Promise<boolean | string>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const outcome = await check();
      if (outcome === true) return;
      last = outcome;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms (last seen: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One command to one node, on a short-lived connection that never retries. */
async function ask(port: number, ...args: string[]): Promise<unknown> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(args[0], ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

const infoField = (info: unknown, field: string): string | undefined =>
  new RegExp(`^${field}:(.*)$`, 'm').exec(String(info))?.[1]?.trim();

/** Ports p with p+10000 unused too would be luck: each node gets its own free bus port instead. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

export interface TestRedisCluster {
  /** redis-cluster://127.0.0.1:p1,... (every master and replica as seed nodes). */
  url: string;
  ports: number[];
  /** The port of the master serving the slot of `key`. */
  masterOf(key: string): Promise<number>;
  /** The port of a replica of the master on `port`, or null when it has none (its replica was promoted and it died). */
  replicaOf(port: number): Promise<number | null>;
  /** SIGKILLs the master on `port` (then calls `killed`); resolves once its replica serves its slots and the cluster is ok again. */
  killMaster(port: number, killed?: () => void): Promise<{ promotedPort: number }>;
  /**
   * SIGKILLs the master on `port` with its replica told not to take over on its own (cluster-replica-no-failover), so
   * its slots stay unserved for as long as `whileDown` runs, however fast or slow the machine; then the replica takes
   * over (CLUSTER FAILOVER FORCE). Resolves once it serves and the cluster is ok again.
   */
  killMasterHoldingFailover(port: number, whileDown: () => Promise<void>): Promise<{ promotedPort: number }>;
  /**
   * SIGSTOPs the node on `port` (a frozen VM: its sockets stay open, it answers nothing; then calls `stopped`);
   * resolves once every other node flags it failed and the cluster is ok without it (its replica promoted if it was a
   * master). resumeNode() sends SIGCONT.
   */
  pauseNode(port: number, stopped?: () => void): Promise<void>;
  resumeNode(port: number): void;
  stop(): Promise<void>;
}

export async function startRedisCluster(): Promise<TestRedisCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailbox-cluster-'));
  const ports = await freePorts(12);
  const nodes: Node[] = [];
  const alive = new Set<number>();
  const stop = async () => {
    for (const node of nodes) node.child.kill('SIGCONT'); // a paused process acts on SIGKILL, but say it plainly
    await Promise.all(nodes.map((node) => stopChild(node.child, 'SIGKILL')));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 6; i++) {
      const port = ports[i];
      const child = await spawnRedis(port, [
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(ports[i + 6]),
        '--cluster-config-file',
        path.join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '1000',
        '--dir',
        dir,
      ]);
      nodes.push({ port, child });
      alive.add(port);
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], {
      timeout: 30_000,
    });
    await waitClusterOk([...alive], 6);
  } catch (error) {
    await stop();
    throw error;
  }
  const masterOf = async (key: string): Promise<number> => {
    const slot = Number(await ask([...alive][0], 'CLUSTER', 'KEYSLOT', key));
    const slots = (await ask([...alive][0], 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    const range = slots.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return Number(range[2][1]);
  };
  const replicaOf = async (port: number): Promise<number | null> => {
    const replicas = String(await ask(port, 'CLUSTER', 'REPLICAS', String(await ask(port, 'CLUSTER', 'MYID'))));
    const replicaPort = Number(/127\.0\.0\.1:(\d+)@/.exec(replicas)?.[1]);
    return replicaPort && alive.has(replicaPort) ? replicaPort : null;
  };
  return {
    url: `redis-cluster://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`,
    ports: nodes.map((node) => node.port),
    masterOf,
    replicaOf,
    async killMaster(port, killed) {
      const replicaPort = await replicaOf(port);
      if (!replicaPort) throw new Error(`the master on ${port} has no replica`);
      await stopChild(nodes.find((node) => node.port === port)!.child, 'SIGKILL');
      killed?.();
      alive.delete(port);
      await until(
        `the replica on ${replicaPort} promoted`,
        async () => infoField(await ask(replicaPort, 'INFO', 'replication'), 'role') === 'master',
      );
      await waitClusterOk([...alive], 5);
      return { promotedPort: replicaPort };
    },
    async killMasterHoldingFailover(port, whileDown) {
      const replicaPort = await replicaOf(port);
      if (!replicaPort) throw new Error(`the master on ${port} has no replica`);
      await ask(replicaPort, 'CONFIG', 'SET', 'cluster-replica-no-failover', 'yes');
      await stopChild(nodes.find((node) => node.port === port)!.child, 'SIGKILL');
      alive.delete(port);
      await whileDown();
      // FORCE: the master is dead, so no handshake with it. An election that fails is not tried again by a replica that
      // may not fail over on its own: asked again every 3 s until it serves.
      let askAgainAt = 0;
      await until('the replica takes over', async () => {
        if (infoField(await ask(replicaPort, 'INFO', 'replication'), 'role') === 'master') return true;
        if (Date.now() >= askAgainAt) {
          askAgainAt = Date.now() + 3_000;
          await ask(replicaPort, 'CLUSTER', 'FAILOVER', 'FORCE');
        }
        return 'not master yet';
      });
      await ask(replicaPort, 'CONFIG', 'SET', 'cluster-replica-no-failover', 'no');
      await waitClusterOk([...alive], 5);
      return { promotedPort: replicaPort };
    },
    async pauseNode(port, stopped) {
      const id = String(await ask(port, 'CLUSTER', 'MYID'));
      nodes.find((node) => node.port === port)!.child.kill('SIGSTOP');
      stopped?.();
      alive.delete(port);
      const others = [...alive];
      await until(`the others flag the node on ${port} failed`, async () => {
        for (const other of others) {
          const line = String(await ask(other, 'CLUSTER', 'NODES'))
            .split('\n')
            .find((entry) => entry.startsWith(id));
          if (!/\bfail\b/.test(line ?? '')) return `${other}: ${line}`;
        }
        return true;
      });
      await waitClusterOk(others, 6);
    },
    resumeNode(port) {
      nodes.find((node) => node.port === port)!.child.kill('SIGCONT');
      alive.add(port);
    },
    stop,
  };
}

/** Every live node says the cluster is ok, every slot is served, and every replica is in sync with its master. */
async function waitClusterOk(ports: readonly number[], known: number): Promise<void> {
  await until('the Redis Cluster ready', async () => {
    for (const port of ports) {
      const info = await ask(port, 'CLUSTER', 'INFO');
      if (infoField(info, 'cluster_state') !== 'ok') return `${port}: ${infoField(info, 'cluster_state')}`;
      if (infoField(info, 'cluster_slots_ok') !== '16384') return `${port}: slots ok ${infoField(info, 'cluster_slots_ok')}`;
      if (Number(infoField(info, 'cluster_known_nodes')) < known)
        return `${port}: knows ${infoField(info, 'cluster_known_nodes')}`;
      const replication = await ask(port, 'INFO', 'replication');
      if (infoField(replication, 'role') === 'slave' && infoField(replication, 'master_link_status') !== 'up')
        return `${port}: replica link ${infoField(replication, 'master_link_status')}`;
    }
    return true;
  });
}

export interface TestRedisSentinel {
  /** redis+sentinel://127.0.0.1:s1,...,/mymaster */
  url: string;
  sentinelPorts: number[];
  masterName: string;
  /** The port of the current master, as the sentinels report it. */
  masterPort(): Promise<number>;
  /** SIGKILLs the current master (then calls `killed`); resolves once every sentinel names the promoted replica and it accepts writes. */
  killMaster(killed?: () => void): Promise<{ promotedPort: number }>;
  /** SIGKILLs every sentinel (the Redis nodes keep running) and leaves them down until startSentinels(). */
  killSentinels(): Promise<void>;
  /** Starts the sentinels that are down again on their ports, from the configuration they rewrote while running. */
  startSentinels(): Promise<void>;
  /** SIGSTOP (SIGCONT with `paused` false) every sentinel: they keep their sockets open but answer nothing. */
  pauseSentinels(paused: boolean): void;
  stop(): Promise<void>;
}

function spawnSentinel(conf: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis sentinel did not start: ${output}`)), 10_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-server --sentinel (install the Debian package redis-server): ${error.message}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('+monitor master')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
  });
}

export async function startRedisSentinel(): Promise<TestRedisSentinel> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailbox-sentinel-'));
  const [masterPort, replicaPort, ...sentinelPorts] = await freePorts(5);
  const children = new Map<number, ChildProcess>();
  const stop = async () => {
    for (const child of children.values()) child.kill('SIGCONT'); // a paused process acts on SIGKILL, but say it plainly
    await Promise.all([...children.values()].map((child) => stopChild(child, 'SIGKILL')));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const sentinelConf = (port: number) => path.join(dir, `sentinel-${port}.conf`);
  const masterNow = async (sentinel: number) =>
    Number(((await ask(sentinel, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as string[])[1]);
  try {
    // A replica's first sync makes the master write a snapshot: into our temp dir, never the working directory.
    const data = ['--dir', dir, '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];
    children.set(masterPort, await spawnRedis(masterPort, data));
    children.set(replicaPort, await spawnRedis(replicaPort, [...data, '--replicaof', '127.0.0.1', String(masterPort)]));
    await until('the replica in sync', async () => {
      const info = await ask(replicaPort, 'INFO', 'replication');
      return infoField(info, 'master_link_status') === 'up' || String(infoField(info, 'master_link_status'));
    });
    for (const port of sentinelPorts) {
      const conf = sentinelConf(port);
      fs.writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
          `sentinel failover-timeout ${MASTER_NAME} 5000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n'),
      );
      children.set(port, await spawnSentinel(conf));
    }
    // Every sentinel knows the replica and the two other sentinels (else a failover could not reach its quorum).
    await until('the sentinels agree', async () => {
      for (const port of sentinelPorts) {
        const master = (await ask(port, 'SENTINEL', 'MASTER', MASTER_NAME)) as string[];
        const field = (name: string) => master[master.indexOf(name) + 1];
        if (field('num-slaves') !== '1' || field('num-other-sentinels') !== '2')
          return `${port}: ${field('num-slaves')} replica(s), ${field('num-other-sentinels')} other sentinel(s)`;
      }
      return true;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `redis+sentinel://${sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',')}/${MASTER_NAME}`,
    sentinelPorts,
    masterName: MASTER_NAME,
    masterPort: () => masterNow(sentinelPorts[0]),
    async killMaster(killed) {
      const old = await masterNow(sentinelPorts[0]);
      const promotedPort = old === masterPort ? replicaPort : masterPort;
      await stopChild(children.get(old)!, 'SIGKILL');
      killed?.();
      children.delete(old);
      await until(
        'the sentinels fail over',
        async () => {
          for (const port of sentinelPorts) if ((await masterNow(port)) !== promotedPort) return `${port} still names ${old}`;
          return infoField(await ask(promotedPort, 'INFO', 'replication'), 'role') === 'master' || 'not master yet';
        },
        30_000,
      );
      return { promotedPort };
    },
    async killSentinels() {
      await Promise.all(sentinelPorts.map((port) => stopChild(children.get(port)!, 'SIGKILL')));
    },
    async startSentinels() {
      for (const port of sentinelPorts) {
        const child = children.get(port)!;
        if (child.exitCode === null && child.signalCode === null) continue; // still running
        children.set(port, await spawnSentinel(sentinelConf(port)));
      }
    },
    pauseSentinels(paused) {
      for (const port of sentinelPorts) children.get(port)!.kill(paused ? 'SIGSTOP' : 'SIGCONT');
    },
    stop,
  };
}
