/**
 * `audit verify` over a 1,000,000-event SQLite log: the scratch rebuild from
 * the log plus the full comparison with the live views (every agent's
 * heartbeat, unread count and inbox / unread / outbox listings, task lists,
 * every delivery ledger). The live views are built first by the mailbox's own
 * projector (as `mailbox serve` does at start; not part of the figure); verify
 * then reads them as `mailbox audit verify` does beside a running server: its
 * own stores opened by openPipeline, a separate reader of the views file.
 * Target: <= 30 s. Median of 3 runs.
 */
import 'reflect-metadata';
import pino from 'pino';
import { runVerify } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { openPipeline } from '../../src/compositionRoot';
import { parseConfig } from '../../src/config';
import { createMailbox } from '../../src/mailbox';
import { memoryMb } from '../lib/memory';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median } from '../lib/stats';
import { nowMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';
import { Writable } from 'node:stream';
import { generateAuditLog } from './auditLog';

const EVENTS = scaled(1_000_000, 10_000);
const AGENTS = 500;
const RUNS = 3;

const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() });

runBench('audit/verify', async (report) => {
  await withTmpDir(async (dir) => {
    const log = await generateAuditLog(dir, EVENTS, AGENTS);
    report.note('log', {
      ...log.summary,
      sqliteMb: Math.round(log.bytes / 2 ** 20),
      generatedInMs: Math.round(log.generatedInMs),
    });
    const liveStarted = nowMs();
    const mailbox = await createMailbox(
      { dataDir: dir, adminToken: 'bench-admin-token-0123456789abcdef', logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    report.note('live views built by the projector in', `${Math.round(nowMs() - liveStarted)} ms`);
    const config = parseConfig({ dataDir: dir, adminToken: 'bench-admin-token-0123456789abcdef', logLevel: 'silent' });
    const reader = await openPipeline(config, pino({ level: 'silent' }), 'auto');
    try {
      const times: number[] = [];
      let last = null;
      for (let i = 0; i < RUNS; i++) {
        const started = nowMs();
        const { code, report: verified } = await runVerify(
          eventStoreSource(reader.eventStore),
          reader.projections,
          { json: true, progress: false },
          { stdout: discard(), stderr: process.stderr, env: {} },
        );
        times.push((nowMs() - started) / 1000);
        if (code !== 0)
          throw new Error(`verify found drift on a healthy system: ${JSON.stringify(verified.differences.slice(0, 3))}`);
        last = verified;
      }
      report.metric(
        `verify ${log.summary.events} events (rebuild + full diff, median of ${RUNS})`,
        median(times),
        's',
        atMost(30),
        {
          runsSeconds: times.map((t) => Math.round(t * 100) / 100),
          eventsRebuilt: last!.eventsRebuilt,
          agentsCompared: last!.agentsCompared,
          entriesCompared: last!.entriesCompared,
        },
      );
      report.metric(
        'peak RSS (live views + the scratch rebuild of 1 run)',
        Math.round(process.resourceUsage().maxRSS / 1024),
        'MB',
      );
      report.metric('RSS after verify (live views only; the scratch rebuild is released)', memoryMb().rssMb, 'MB');
    } finally {
      await reader.close();
      await mailbox.close();
    }
  });
});
