/**
 * One owner per SQLite views file: the mailbox that projects into it holds an exclusive SQLite lock on a small file
 * beside it (`views.sqlite.owner-lock`) for as long as it runs, and a second one refuses to start.
 *
 * Why: two mailboxes on one data dir share the log and the views, but each publishes wakes on its own process's bus,
 * and only for the events its own projector applied. Whichever applied an event first took its wakes; an agent
 * listening on the other one never heard of that message (found by running two `mailbox serve` on one
 * MAILBOX_DATA_DIR: each wake stream received only the sends made through its own server). The owner also moves a
 * damaged views file aside, which must never happen under another process writing to it.
 *
 * Why a SQLite lock: the operating system drops it when the process ends, however it ends (SIGKILL included), so a
 * crash never leaves a stale lock to clear by hand, and a restart after one is not refused. A pid file could not
 * tell a dead holder from a live one. The holder's process id and start time go in `views.sqlite.owner` beside it, for
 * the refusal message.
 */
import fs from 'node:fs';
import path from 'node:path';
import { StartupError } from '../../../startupError';
import { openSqliteDatabase, type SqliteDatabase, type SqliteDriver } from '../../../support/sqlite/sqliteDriver';
import { makeDirectory, OWNER_ONLY } from '../../../support/makeDirectory';

/** Another process owns the views file: a startup error (one line, exit code 2) for `serve` and `heartbeat --projector on`. */
export class ViewsFileInUse extends StartupError {
  constructor(
    readonly file: string,
    readonly holder: string | null,
  ) {
    // The holder may be this very process (a library host's second createMailbox on the data dir of one not closed):
    // "stop it first" sent its reader looking for another process, the pid named being its own.
    const here = holder?.startsWith(`pid ${process.pid},`) === true;
    super(
      `another mailbox${here ? ' in this process' : ''}${holder === null ? '' : ` (${holder})`} is serving the views file ` +
        `${file} (it holds ${lockFileOf(file)}): ${here ? 'close that one first' : 'stop it first'}, or give this one ` +
        'another MAILBOX_DATA_DIR. Two mailboxes on one data dir would each wake only the agents connected to it.',
      { variable: 'MAILBOX_DATA_DIR', file },
      // As an envelope (createMailbox's refusal): a state that ends when the other mailbox stops, not a bad setting.
      { refusal: { error: 'Data dir in use', code: 'UNAVAILABLE' } },
    );
  }
}

export const lockFileOf = (viewsFile: string): string => `${viewsFile}.owner-lock`;

/** Who holds it, as written by the holder; beside the lock file, readable while the lock is held. */
const holderFileOf = (viewsFile: string): string => `${viewsFile}.owner`;

export class SqliteViewsOwnerLock {
  private constructor(
    private readonly db: SqliteDatabase,
    private readonly viewsFile: string,
  ) {}

  /** Takes the lock, or throws ViewsFileInUse at once (no waiting: a live owner does not let go). */
  static acquire(viewsFile: string, driver: SqliteDriver): SqliteViewsOwnerLock {
    makeDirectory(path.dirname(viewsFile), OWNER_ONLY); // taken before the views file is opened (and made)
    const db = openSqliteDatabase(lockFileOf(viewsFile), driver);
    try {
      db.pragma('busy_timeout = 0');
      db.pragma('journal_mode = OFF'); // nothing to roll back: the file only carries the lock
      db.pragma('locking_mode = EXCLUSIVE'); // kept after the first write, until this connection closes
      db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY); COMMIT;');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY') || (error as { code?: string }).code === 'SQLITE_LOCKED')
        throw new ViewsFileInUse(viewsFile, readHolder(viewsFile));
      throw error;
    }
    fs.writeFileSync(holderFileOf(viewsFile), `pid ${process.pid}, since ${new Date().toISOString()}\n`, { mode: 0o600 });
    return new SqliteViewsOwnerLock(db, viewsFile);
  }

  release(): void {
    if (!this.db.open) return;
    fs.rmSync(holderFileOf(this.viewsFile), { force: true });
    this.db.close();
  }
}

function readHolder(viewsFile: string): string | null {
  try {
    return fs.readFileSync(holderFileOf(viewsFile), 'utf8').trim() || null;
  } catch {
    return null;
  }
}
