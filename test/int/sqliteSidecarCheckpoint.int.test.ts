/**
 * The sidecar's checkpoint (src/support/sqlite/sqliteSidecar.ts) under commits that keep coming: it copies the
 * frames committed while it ran too, so that the next transaction rewinds the WAL (writes from its start again)
 * instead of the WAL growing until the writer's own limit checkpoints inside a COMMIT.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { SqliteSidecar } from '../../src/support/sqlite/sqliteSidecar';
import { tempDir } from '../support/fixtures';

type CheckpointResult = Array<{ busy: number; log: number; checkpointed: number }>;

it('given commits landing while a checkpoint runs, when it answers and one more transaction commits, then the WAL was rewound', async () => {
  const dir = tempDir('mailbox-sidecar-');
  const file = path.join(dir, 'views.sqlite');
  const db = openSqliteDatabase(file);
  const sidecar = new SqliteSidecar(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0'); // only the sidecar checkpoints, as under load (the writer's limit far off)
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
    const commit = (rows: number) =>
      db.transaction(() => {
        for (let i = 0; i < rows; i++) insert.run(Buffer.alloc(3000, i));
      })();
    await sidecar.request({ kind: 'checkpoint' }); // the sidecar's thread is up before the measured request
    commit(20_000); // ~20,000 frames: the first pass takes a while
    const framesAtRequest = Math.floor((fs.statSync(`${file}-wal`).size - 32) / (4096 + 24)); // header, then frames
    const answered = sidecar.request({ kind: 'checkpoint' }) as Promise<CheckpointResult>;
    for (let i = 0; i < 10; i++) {
      commit(50); // commits that land while the first pass copies (far shorter than it)
      await new Promise((resolve) => setImmediate(resolve));
    }
    const [result] = await answered;
    expect(result.busy).toBe(0);
    expect(result.checkpointed).toBe(result.log);
    expect(result.log).toBeGreaterThan(framesAtRequest); // it went on to copy the frames committed meanwhile

    commit(1);
    const [after] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult; // log: the frames the WAL holds now
    expect(after.log).toBeLessThan(100); // rewound: the WAL holds only the last transaction's frames
  } finally {
    await sidecar.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
