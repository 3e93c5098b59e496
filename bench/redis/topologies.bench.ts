/**
 * The mailbox on Redis topologies (issue 14), for the scale model in docs/operators.md:
 * - sends/s and CPU per send (this process and every redis-server), one API node, on one Redis
 *   node and on a local Redis Cluster (3 masters + 3 replicas), runs alternated back to back;
 * - projection throughput (events/s applied) on one node and on the Cluster;
 * - Redis memory per registered agent and per delivered direct message (one node);
 * - failover as the mailbox sees it: from a master's SIGKILL to the first send to an agent on
 *   that master listed in its inbox, on the Cluster and through Sentinel.
 * On a 2-core machine these are costs per send, not a speed-up: six redis-servers share the cores.
 */
import { Redis } from 'ioredis';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import type { Mailbox, MailboxClient } from '../../src/mailbox';
import { generateLog, projectAll } from '../../test/contract/projectionStoreLog';
import { startRedis, type TestRedis } from '../../test/support/redisServer';
import { startRedisCluster, startRedisSentinel } from '../../test/support/redisTopologies';
import { cpuMs } from '../lib/cpu';
import { agentIdentity, openEmbeddedMailbox, registerAgents } from '../lib/mailbox';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round } from '../lib/stats';
import { closedLoop, nowMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';

const SENDERS = 32;
const AGENTS = 64;
const SENDS = scaled(4000, 400);
const RUNS = 3;
const PROJECTED_EVENTS = scaled(30_000, 3000);
const MEMORY_AGENTS = scaled(2000, 200);
const MEMORY_MESSAGES = scaled(10_000, 1000);
let namespaces = 0;

/** CPU ms every listed redis-server has used so far (INFO cpu). */
async function redisCpuMs(ports: readonly number[]): Promise<number> {
  let total = 0;
  for (const port of ports) {
    const client = new Redis({ port, host: '127.0.0.1' });
    const info = await client.info('cpu').finally(() => client.quit());
    const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
    total += (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
  }
  return total;
}

async function usedMemory(port: number): Promise<number> {
  const client = new Redis({ port, host: '127.0.0.1' });
  const info = await client.info('memory').finally(() => client.quit());
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

async function withMailbox<T>(url: string, work: (mailbox: Mailbox) => Promise<T>): Promise<T> {
  return withTmpDir(async (dir) => {
    const mailbox = await openEmbeddedMailbox(dir, {
      eventStoreUrl: 'memory:',
      redisUrl: url,
      redisNamespace: `bt${process.pid}n${++namespaces}`,
      rateLimitPerSecond: 0,
    });
    try {
      return await work(mailbox);
    } finally {
      await mailbox.projections.reset();
      await mailbox.close();
    }
  });
}

async function sendRun(url: string, ports: readonly number[]) {
  return withMailbox(url, async (mailbox) => {
    const clients = await registerAgents(
      mailbox,
      Array.from({ length: AGENTS }, (_unused, i) => agentIdentity(i)),
    );
    const send = (index: number, worker: number) =>
      clients[worker % AGENTS].send({ to: agentIdentity((worker + 1 + index) % AGENTS), subject: `s${index}`, body: 'b' });
    await closedLoop(scaled(400, 40), SENDERS, send);
    const [ours, theirs] = [cpuMs(), await redisCpuMs(ports)];
    const { elapsedMs } = await closedLoop(SENDS, SENDERS, send);
    return {
      perSecond: (SENDS / elapsedMs) * 1000,
      cpuUsPerSend: ((cpuMs() - ours) / SENDS) * 1000,
      redisCpuUsPerSend: (((await redisCpuMs(ports)) - theirs) / SENDS) * 1000,
    };
  });
}

async function projectionRun(url: string, scriptPerTag: boolean) {
  const store = new RedisProjectionStore(await connectRedis(url, { name: 'bench-projection' }), {
    namespace: `bp${process.pid}n${++namespaces}`,
    scriptPerTag,
  });
  try {
    const events = projectAll(generateLog(PROJECTED_EVENTS, AGENTS));
    const started = nowMs();
    for (let i = 0; i < events.length; i += 1000) await store.applyBatch(events.slice(i, i + 1000));
    return (events.length / (nowMs() - started)) * 1000;
  } finally {
    await store.reset();
    await store.close();
  }
}

/** From the kill to the first send to @agent-00001 (on the killed master) listed in its inbox. */
async function failoverMs(url: string, kill: (killed: () => void) => Promise<unknown>): Promise<number> {
  return withMailbox(url, async (mailbox) => {
    const clients = await registerAgents(mailbox, [agentIdentity(0), agentIdentity(1)]);
    const [sender, recipient]: MailboxClient[] = clients;
    let killed = 0;
    let signalled!: () => void;
    const gone = new Promise<void>((resolve) => (signalled = resolve));
    const promoted = kill(() => {
      killed = nowMs();
      signalled();
    });
    await gone;
    for (;;) {
      try {
        const { messageId } = await sender.send({ to: agentIdentity(1), subject: 'after the kill', body: 'b' });
        const listed = await recipient.listMessages({ limit: 5 });
        if (listed.messages.some((message) => message.messageId === messageId)) break;
      } catch {
        // 503 while the replica is promoted: try again
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ms = nowMs() - killed;
    await promoted;
    return ms;
  });
}

runBench('redis/topologies', async (report) => {
  const single = await startRedis();
  const cluster = await startRedisCluster();
  try {
    report.note(
      'setup',
      `${SENDERS} concurrent senders, ${AGENTS} agents, ${SENDS} direct sends per run, ${RUNS} runs alternated`,
    );
    const runs: Record<'single' | 'cluster', Array<Awaited<ReturnType<typeof sendRun>>>> = { single: [], cluster: [] };
    for (let run = 0; run < RUNS; run++) {
      runs.single.push(await sendRun(single.url, [single.port]));
      runs.cluster.push(await sendRun(cluster.url, cluster.ports));
    }
    for (const [name, figures] of Object.entries(runs)) {
      const label = name === 'single' ? 'one Redis node' : 'Redis Cluster 3+3';
      report.metric(`sends/s, one API node, ${label}`, round(median(figures.map((f) => f.perSecond))), 'sends/s');
      report.metric(`API CPU per send, ${label}`, round(median(figures.map((f) => f.cpuUsPerSend))), 'µs');
      report.metric(`Redis CPU per send (all nodes), ${label}`, round(median(figures.map((f) => f.redisCpuUsPerSend))), 'µs');
    }
    const projected = { single: [] as number[], cluster: [] as number[] };
    for (let run = 0; run < RUNS; run++) {
      projected.single.push(await projectionRun(single.url, false));
      projected.cluster.push(await projectionRun(cluster.url, true));
    }
    report.metric('projection, one Redis node (one script per chunk)', round(median(projected.single)), 'events/s');
    report.metric('projection, Redis Cluster 3+3 (one script per tag)', round(median(projected.cluster)), 'events/s');

    await memoryFigures(report, single);
    report.metric(
      'failover seen by the mailbox, Redis Cluster (node timeout 1 s)',
      round(
        await failoverMs(cluster.url, async (killed) =>
          cluster.killMaster(await cluster.masterOf(`{${agentIdentity(1)}}`), killed),
        ),
      ),
      'ms',
    );
  } finally {
    await cluster.stop();
    await single.stop();
  }
  const sentinel = await startRedisSentinel();
  try {
    report.metric(
      'failover seen by the mailbox, Sentinel (down-after 1 s)',
      round(await failoverMs(sentinel.url, (killed) => sentinel.killMaster(killed))),
      'ms',
    );
  } finally {
    await sentinel.stop();
  }
});

/** Bytes of Redis memory per registered agent and per direct message delivered (inbox, outbox, summary, counts). */
async function memoryFigures(report: Parameters<Parameters<typeof runBench>[1]>[0], single: TestRedis): Promise<void> {
  await withMailbox(single.url, async (mailbox) => {
    const before = await usedMemory(single.port);
    const clients = await registerAgents(
      mailbox,
      Array.from({ length: MEMORY_AGENTS }, (_unused, i) => agentIdentity(i)),
    );
    const afterAgents = await usedMemory(single.port);
    await closedLoop(MEMORY_MESSAGES, SENDERS, (index, worker) =>
      clients[(worker * 7 + index) % MEMORY_AGENTS].send({
        to: agentIdentity((worker * 7 + index + 1) % MEMORY_AGENTS),
        subject: `Status ${index}`,
        body: 'Please review the attached plan and reply with your comments. '.repeat(5),
      }),
    );
    const afterMessages = await usedMemory(single.port);
    report.metric('Redis memory per registered agent', round((afterAgents - before) / MEMORY_AGENTS), 'bytes');
    report.metric(
      'Redis memory per direct message (~330 B body; summary, inbox and outbox entries, counts)',
      round((afterMessages - afterAgents) / MEMORY_MESSAGES),
      'bytes',
    );
  });
}
