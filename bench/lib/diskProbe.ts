/**
 * How long one durable SQLite commit takes on this disk right now (WAL,
 * synchronous=FULL, one small row). Send latency can never beat it, and on a
 * shared machine its tail moves with other processes' I/O: reported beside
 * latency figures so that they can be read in context.
 */
import path from 'node:path';
import Database from 'libsql';
import { summarize, type Summary } from './stats';
import { nowMs } from './timing';
import { withTmpDir } from './tmp';

export function durableCommitLatency(commits = 200): Promise<Summary> {
  return withTmpDir(async (dir) => {
    const db = new Database(path.join(dir, 'probe.sqlite'));
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec('CREATE TABLE probe (id INTEGER PRIMARY KEY, value TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO probe (value) VALUES (?)');
      const samples: number[] = [];
      for (let i = 0; i < commits; i++) {
        const started = nowMs();
        insert.run('x'.repeat(200)); // autocommit: one transaction, one fsync
        samples.push(nowMs() - started);
      }
      return summarize(samples);
    } finally {
      db.close();
    }
  }, 'mailbox-disk-probe-');
}
