/**
 * The log the audit benchmarks read: a synthetic SQLite log written through
 * SqliteEventStore appends (bench/lib/syntheticLog.ts). Appends are fsync'd
 * one by one, so the log is generated on tmpfs (/dev/shm) when there is one and
 * then copied to the benchmark's directory on disk, where it is measured.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { writeSyntheticLog, type SyntheticLogSummary } from '../lib/syntheticLog';
import { nowMs } from '../lib/timing';

export interface GeneratedLog {
  file: string;
  summary: Omit<SyntheticLogSummary, 'identities'>;
  generatedInMs: number;
  bytes: number;
}

const scratchRoot = (): string =>
  process.env.BENCH_TMPDIR === undefined && fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

export async function generateAuditLog(dir: string, events: number, agents: number): Promise<GeneratedLog> {
  const scratch = fs.mkdtempSync(path.join(scratchRoot(), 'mailbox-audit-gen-'));
  try {
    const scratchFile = path.join(scratch, 'events.sqlite');
    const store = SqliteEventStore.open(scratchFile);
    const started = nowMs();
    let reported = 0;
    const { identities: _ids, ...summary } = await writeSyntheticLog(store, {
      agents,
      events,
      readShare: 0.3,
      archiveShare: 0.2,
      broadcastEvery: 25_000,
      onProgress: (written) => {
        if (written - reported >= 200_000) process.stderr.write(`  generated ${(reported = written)} events\n`);
      },
    });
    await store.close();
    const generatedInMs = nowMs() - started;
    const file = path.join(dir, 'events.sqlite');
    // The last transactions may still sit in the write-ahead log: copy it along, or they would be lost.
    for (const suffix of ['', '-wal', '-shm']) {
      if (fs.existsSync(scratchFile + suffix)) fs.copyFileSync(scratchFile + suffix, file + suffix);
    }
    const bytes = ['', '-wal'].reduce(
      (sum, suffix) => sum + (fs.existsSync(file + suffix) ? fs.statSync(file + suffix).size : 0),
      0,
    );
    return { file, summary, generatedInMs, bytes };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
