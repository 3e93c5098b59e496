/**
 * Reads on the embedded default with 100,000 messages in the store: list
 * unread (limit 50) and the unread count, through the library API (query
 * validation included). Targets: list p99 <= 2 ms, unread count <= 0.2 ms.
 */
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { clientsFor, openEmbeddedMailbox } from '../lib/mailbox';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { round, summarize } from '../lib/stats';
import { writeSyntheticLog } from '../lib/syntheticLog';
import { nowMs, sampleMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';
import path from 'node:path';

const AGENTS = 100;
const MESSAGES = scaled(100_000, 10_000);
const SAMPLES = 20_000;
const WARMUP = 2_000;

runBench('core/queries', async (report) => {
  await withTmpDir(async (dir) => {
    // 1. The store: AGENTS agents exchanging MESSAGES direct messages; a fifth of them read.
    const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    const started = nowMs();
    const log = await writeSyntheticLog(store, {
      agents: AGENTS,
      events: 0,
      minDirectMessages: MESSAGES,
      readShare: 0.2,
      archiveShare: 0.05,
    });
    await store.close();
    report.note(
      'store',
      `${log.directMessages} direct messages, ${log.reads} reads, ${log.archives} archives, ` +
        `${AGENTS} agents (~${Math.round(log.directMessages / AGENTS)} per inbox); written in ${Math.round(nowMs() - started)} ms`,
    );
    if (log.directMessages < MESSAGES) throw new Error(`only ${log.directMessages} messages generated`);

    // 2. The embedded default opens it (views rebuilt from the log), then we read.
    const mailbox = await openEmbeddedMailbox(dir);
    try {
      const clients = clientsFor(mailbox, log.identities);
      const client = (i: number) => clients[(i * 7919) % clients.length];
      const firstPage = await client(0).listMessages({ status: 'unread', limit: 50 });
      if (firstPage.messages.length !== 50) throw new Error(`expected a full page, got ${firstPage.messages.length}`);

      // Every timed call must return the page it should (a short or empty page would flatter the figures).
      const expectLength = (page: { messages: unknown[] }, expected: number) => {
        if (page.messages.length !== expected)
          throw new Error(`a timed listing returned ${page.messages.length} messages, not ${expected}`);
      };
      const listUnread = async (i: number) => expectLength(await client(i).listMessages({ status: 'unread', limit: 50 }), 50);
      await sampleMs(WARMUP, listUnread);
      report.latency('list unread (limit 50)', summarize(await sampleMs(SAMPLES, listUnread)), atMost(2));

      const unread = await Promise.all(clients.map(async (c) => (await c.unreadCount()).unread));
      const cursors = await Promise.all(
        clients.map(async (c) => (await c.listMessages({ status: 'unread', limit: 50 })).nextCursor!),
      );
      const nextPage = async (i: number) => {
        const k = (i * 7919) % clients.length;
        expectLength(
          await clients[k].listMessages({ status: 'unread', limit: 50, cursor: cursors[k] }),
          Math.min(50, unread[k] - 50),
        );
      };
      await sampleMs(WARMUP, nextPage);
      report.latency('list unread, second page (cursor)', summarize(await sampleMs(SAMPLES, nextPage)));

      const fromFilter = (i: number) => client(i).listMessages({ status: 'all', from: log.identities[i % AGENTS], limit: 50 });
      await sampleMs(WARMUP / 10, fromFilter);
      report.latency('list all, from filter (scans the inbox)', summarize(await sampleMs(SAMPLES / 10, fromFilter)));

      const count = (i: number) => client(i).unreadCount();
      await sampleMs(WARMUP, count);
      const counts = summarize(await sampleMs(SAMPLES, count));
      report.metric('unread count p50', counts.p50, 'ms');
      report.metric('unread count p99', counts.p99, 'ms', atMost(0.2), { p90: round(counts.p90), max: round(counts.max) });
    } finally {
      await mailbox.close();
    }
  });
});
