/**
 * `audit replay` from the embedded SQLite log to a file, through the same
 * code as the CLI (runReplay). Target: >= 100,000 events/s (JSON lines).
 * Median of 3 runs per format; the text format is reported alongside.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { runReplay } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { atLeast } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median } from '../lib/stats';
import { nowMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';
import { generateAuditLog } from './auditLog';

const EVENTS = scaled(1_000_000, 10_000);
const AGENTS = 500;
const RUNS = 3;

async function replayOnce(logFile: string, outFile: string, json: boolean): Promise<{ events: number; ms: number; bytes: number }> {
  const store = SqliteEventStore.open(logFile);
  const out = fs.createWriteStream(outFile);
  const started = nowMs();
  const summary = await runReplay(eventStoreSource(store), { from: null, types: null, stream: null },
    { json, progress: false }, { stdout: out, stderr: process.stderr, env: {} });
  out.end();
  await once(out, 'finish');
  const ms = nowMs() - started;
  await store.close();
  const bytes = fs.statSync(outFile).size;
  fs.rmSync(outFile);
  return { events: summary.matched, ms, bytes };
}

runBench('audit/replay', async (report) => {
  await withTmpDir(async (dir) => {
    const log = await generateAuditLog(dir, EVENTS, AGENTS);
    report.note('log', { ...log.summary, sqliteMb: Math.round(log.bytes / 2 ** 20), generatedInMs: Math.round(log.generatedInMs) });
    for (const json of [true, false]) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await replayOnce(log.file, path.join(dir, 'replay.out'), json));
      if (runs.some((run) => run.events !== log.summary.events)) {
        throw new Error(`replay wrote ${runs.map((r) => r.events).join('/')} events, the log holds ${log.summary.events}`);
      }
      const rates = runs.map((run) => (run.events / run.ms) * 1000);
      report.metric(`replay to a file, ${json ? 'JSON lines' : 'text'} (median of ${RUNS})`, median(rates), 'events/s',
        json ? atLeast(100_000) : undefined,
        { runsPerSecond: rates.map(Math.round), runsMs: runs.map((r) => Math.round(r.ms)), outputMb: Math.round(runs[0].bytes / 2 ** 20) });
    }
  });
});
