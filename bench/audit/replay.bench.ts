/**
 * `audit replay` from the embedded SQLite log to a file, through the same
 * code as the CLI: `--json` reads the SQLite file directly (runJsonTextReplay),
 * text goes through the event store port (runReplay); the JSON lines through
 * the port are measured too, for comparison. Target: >= 100,000 events/s
 * (JSON lines, as the CLI writes them). Median of 3 runs each.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { runJsonTextReplay, runReplay } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { SqliteJsonLog } from '../../src/adapters/eventstore/sqliteJsonLog';
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

type Mode = 'json (CLI: from the SQLite file)' | 'json (through the event store port)' | 'text (through the event store port)';
const MODES: Mode[] = [
  'json (CLI: from the SQLite file)',
  'json (through the event store port)',
  'text (through the event store port)',
];

async function replayOnce(
  logFile: string,
  outFile: string,
  mode: Mode,
): Promise<{ events: number; ms: number; cpuMs: number; bytes: number }> {
  const out = fs.createWriteStream(outFile);
  const io = { stdout: out, stderr: process.stderr, env: {} };
  const filter = { from: null, types: null, stream: null };
  const started = nowMs();
  const cpu = process.cpuUsage();
  let events: number;
  if (mode === 'json (CLI: from the SQLite file)') {
    const lines = SqliteJsonLog.open(logFile);
    events = (await runJsonTextReplay(lines, filter, { json: true, progress: false }, io)).matched;
    lines.close();
  } else {
    const store = SqliteEventStore.open(logFile);
    events = (await runReplay(eventStoreSource(store), filter, { json: mode.startsWith('json'), progress: false }, io)).matched;
    await store.close();
  }
  out.end();
  await once(out, 'finish');
  const ms = nowMs() - started;
  const used = process.cpuUsage(cpu);
  const bytes = fs.statSync(outFile).size;
  fs.rmSync(outFile);
  return { events, ms, cpuMs: (used.user + used.system) / 1000, bytes };
}

runBench('audit/replay', async (report) => {
  await withTmpDir(async (dir) => {
    const log = await generateAuditLog(dir, EVENTS, AGENTS);
    report.note('log', {
      ...log.summary,
      sqliteMb: Math.round(log.bytes / 2 ** 20),
      generatedInMs: Math.round(log.generatedInMs),
    });
    for (const mode of MODES) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await replayOnce(log.file, path.join(dir, 'replay.out'), mode));
      if (runs.some((run) => run.events !== log.summary.events)) {
        throw new Error(`replay wrote ${runs.map((r) => r.events).join('/')} events, the log holds ${log.summary.events}`);
      }
      const rates = runs.map((run) => (run.events / run.ms) * 1000);
      report.metric(
        `replay to a file, ${mode} (median of ${RUNS})`,
        median(rates),
        'events/s',
        mode === MODES[0] ? atLeast(100_000) : undefined,
        {
          runsPerSecond: rates.map(Math.round),
          runsMs: runs.map((r) => Math.round(r.ms)),
          cpuMs: runs.map((r) => Math.round(r.cpuMs)),
          outputMb: Math.round(runs[0].bytes / 2 ** 20),
        },
      );
    }
  });
});
