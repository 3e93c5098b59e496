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

export function durableCommitLatency(commits = 200, { rewound = false }: { rewound?: boolean } = {}): Promise<Summary> {
  return withTmpDir(async (dir) => {
    const db = new Database(path.join(dir, 'probe.sqlite'));
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec('CREATE TABLE probe (id INTEGER PRIMARY KEY, value TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO probe (value) VALUES (?)');
      if (rewound) rewind(db, commits);
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

/**
 * `rewound`: the commits go into a WAL file already grown and rewound, as the event log's writer commits in a running
 * mailbox (its WAL is checkpointed in the background, sqliteCheckpointer.ts, and each commit after a checkpoint writes
 * from the WAL's start again): each fsync then writes the commit's pages over blocks the file has, and no change of the
 * file's size. A fresh probe's WAL grows at every commit, and its fsync writes the file's new size and blocks too:
 * measured on this disk (same moments), 0.26 against 0.10 ms idle, and 1.9-4.0 against 0.11-1.1 ms under other
 * processes' writes. The WAL is grown with three times `commits` commits unsynced, checkpointed, then restarted.
 */
function rewind(db: InstanceType<typeof Database>, commits: number): void {
  const insert = db.prepare('INSERT INTO probe (value) VALUES (?)');
  db.pragma('synchronous = OFF');
  for (let i = 0; i < commits * 3; i++) insert.run('x'.repeat(200));
  db.pragma('wal_checkpoint(PASSIVE)'); // no reader: every frame copied, so the next writer starts the WAL over
  db.pragma('synchronous = FULL');
  insert.run('x'.repeat(200));
}
