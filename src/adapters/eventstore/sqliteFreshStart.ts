/**
 * What a first start (mailbox serve, createMailbox) creates, undone when that start is refused.
 *
 * A start that creates its SQLite log (no file there yet) and is then refused (views locked by another process or
 * damaged, a Redis that refuses a later connection, the port taken meanwhile, the heartbeat's hook) left the new log
 * behind: an events.sqlite with an identity of its own (which the next start then served, or named as "this log"), its
 * -wal and -shm, the generated admin token, and the data dir and its parents when they were not there. Now what this
 * start made is removed, and nothing that was there before: the log only when this process created the file itself
 * (O_EXCL: a second process racing for the same dir creates none, and removes none), the file at the path is still
 * that one, no other connection has it open (SQLite removes the -wal when the last connection closes), and it holds
 * no event (creating it writes its identity alone). Then the files this start added beside it (the views and their
 * locks, the token it wrote) and the directories it made, when empty.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from './sqliteEventStore';
import { makeDirectory, OWNER_ONLY } from '../../support/makeDirectory';

export class FreshStart {
  private created: fs.Stats | null = null;
  private token: { file: string; token: string } | null = null;

  private constructor(
    private readonly log: string | null,
    /** The levels of the log's directory that were not there, the deepest first. */
    private readonly missingDirs: readonly string[],
    /** The names in the log's directory before this start. */
    private readonly before: ReadonlySet<string>,
  ) {}

  /** Read before the start opens anything: whether its SQLite log (null: no SQLite log) is missing (else this start undoes nothing). */
  static before(log: string | null): FreshStart {
    try {
      if (log === null || fs.lstatSync(log, { throwIfNoEntry: false }) !== undefined) return new FreshStart(null, [], new Set());
      const missingDirs: string[] = [];
      for (
        let at = path.dirname(log);
        !fs.lstatSync(at, { throwIfNoEntry: false }) && path.dirname(at) !== at;
        at = path.dirname(at)
      )
        missingDirs.push(at);
      return new FreshStart(log, missingDirs, new Set(missingDirs.length > 0 ? [] : readNames(path.dirname(log))));
    } catch {
      return new FreshStart(null, [], new Set()); // a path that cannot be one (under a file, too long): the start's own checks say why
    }
  }

  /**
   * Creates the log's file, empty (SQLite makes it a log when it opens it), right before it is opened: made here, with
   * O_EXCL, the file is known to be this process's. Another process made it first: the start goes on, on that file.
   * Any other failure is left to SQLite's open, which meets it too and says it as a start always has.
   */
  createLog(): void {
    if (this.log === null || this.created !== null) return;
    try {
      makeDirectory(path.dirname(this.log), OWNER_ONLY);
      const fd = fs.openSync(this.log, 'wx', 0o600);
      try {
        this.created = fs.fstatSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      // EEXIST: another process's file, kept whatever becomes of this start.
    }
  }

  /** The admin token this start generated and wrote (removed with the log it was made for). */
  wroteToken(file: string, token: string): void {
    this.token = { file, token };
  }

  /** Once everything the start opened is closed: removes what it created (never throws: the refusal is what is said). */
  async undo(): Promise<void> {
    try {
      if (await this.removeLog()) this.removeBeside();
    } catch {
      // Left as it is: the start's own refusal is the line the operator reads.
    }
  }

  private async removeLog(): Promise<boolean> {
    const log = this.log;
    if (log === null || this.created === null) return false;
    const now = fs.lstatSync(log, { throwIfNoEntry: false });
    if (now === undefined || now.ino !== this.created.ino || now.dev !== this.created.dev) return false;
    if (fs.existsSync(`${log}-wal`)) return false; // another connection has it open (the last one to close removes it)
    // Empty: SQLite wrote nothing in it (a full disk at its first page); read, it was no log, and the file stayed behind.
    if (now.size > 0) {
      const store = SqliteEventStore.open(log, undefined, { readOnly: true });
      const head = await store.headPosition().finally(() => store.close());
      if (head !== null) return false;
    }
    for (const file of [log, `${log}-wal`, `${log}-shm`]) fs.rmSync(file, { force: true });
    return true;
  }

  /** The files this start added beside the log (its views, their locks, the token it wrote), then the directories it made. */
  private removeBeside(): void {
    const dir = path.dirname(this.log!);
    const stem = path.basename(this.log!, path.extname(this.log!));
    const views = stem === 'events' ? 'views.sqlite' : `${stem}.views.sqlite`;
    for (const name of readNames(dir)) {
      if (this.before.has(name)) continue;
      const file = path.join(dir, name);
      const ours =
        name.startsWith(views) ||
        name.startsWith(path.basename(this.log!)) ||
        (this.token?.file === file && readText(file)?.trim() === this.token.token);
      if (ours) fs.rmSync(file, { force: true });
    }
    for (const level of this.missingDirs) {
      try {
        fs.rmdirSync(level);
      } catch {
        return; // not empty: something else is there now, kept with its parents
      }
    }
  }
}

function readNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
