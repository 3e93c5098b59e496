/**
 * A copy of the SQLite event log taken while a server keeps writing it (`mailbox backup`). The log is the truth (the
 * views are rebuilt from it), so this is the backup of a mailbox on the embedded default.
 *
 * Why not `cp`: the log is a WAL database, its recent commits in events.sqlite-wal until a checkpoint copies them
 * into events.sqlite. A copy of the main file alone misses every message acknowledged since the last checkpoint, and
 * a copy of both taken while the server writes can hold half a checkpoint: a file SQLite calls damaged.
 *
 * How: `VACUUM INTO` on a read-only connection, one read transaction, so the copy is the log as it stood at one
 * instant: every event acknowledged before the backup started, each append whole (the server's writes go on
 * meanwhile, into its WAL). Why not SQLite's online backup API: it restarts from the first page whenever another
 * connection writes the source, which a busy server does all the time. The copy is written under a temporary name
 * beside the destination, fsynced (SQLite does not sync what VACUUM INTO writes), checked (quick_check, its events,
 * its head, its log identity), and only then renamed into place and the directory synced: the destination never holds
 * a partial or unsynced file, and an existing file is never overwritten.
 *
 * The copy runs in a child process (VACUUM INTO is one synchronous call, seconds per GB), so that the caller can
 * report progress (the temporary file's size against the log's) and stop on a signal. Not a worker thread: a thread
 * cannot be stopped inside a SQLite call, and terminating one there made better-sqlite3 abort the whole process
 * (`FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal`); a child process is killed, and its partial copy removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { MailboxError } from '../../errors';
import { defaultSqliteDriver } from '../../support/sqlite/sqliteDriver';
import type { SqliteDriver } from '../../support/sqlite/sqliteDriverName';
import { isUnreadableFileError, storageConditionOf, UnreadableLogFile, type StorageCondition } from './sqliteErrors';

export interface SqliteLogBackup {
  /** The log copied, and the backup (absolute paths). */
  source: string;
  file: string;
  /** Events in the copy, and its last position (null: an empty log). */
  events: number;
  head: bigint | null;
  /** The log's head when the backup started: every event up to it is in the copy. */
  headAtStart: bigint | null;
  logIdentity: string | null;
  bytes: number;
  ms: number;
}

export interface BackupProgress {
  /** Bytes of the copy written so far, and the size of the log (its file and WAL): an estimate of the total. */
  written: number;
  estimated: number;
}

export interface SqliteBackupOptions {
  driver?: SqliteDriver;
  onProgress?: (progress: BackupProgress) => void;
  progressEveryMs?: number;
  /** Aborted: the temporary file is removed and the backup rejects with BackupInterrupted (the log is untouched). */
  signal?: AbortSignal;
}

/** A backup stopped by its signal: nothing was left at the destination, nor beside it. */
export class BackupInterrupted extends Error {
  constructor(readonly destination: string) {
    super(`backup interrupted: nothing was written to ${destination} (the partial copy was removed)`);
    this.name = 'BackupInterrupted';
  }
}

/** What the copying process reports of its copy (positions as text: JSON has no bigint). */
interface CopyReport {
  headAtStart: string | null;
  events: number;
  head: string | null;
  logIdentity: string | null;
  check: string;
}

/** The copying process: `node -e COPY_SOURCE <job as JSON>`; one JSON line on stdout, {ok, report} or {ok, error, code}. */
const COPY_SOURCE = `
// The copy holds every message of the log: its owner's only (0600), as the data dir is, whatever the umask is (a
// backup left in /tmp or a shared directory was readable by every user). Set before the file exists, not after.
process.umask(0o077);
const job = JSON.parse(process.argv[1]);
const Database = require(job.driver);
const head = (db) => {
  const row = db.prepare('SELECT MAX(position) AS head FROM events').get();
  return row.head === null ? null : String(row.head);
};
const answer = (reply) => process.stdout.write(JSON.stringify(reply) + '\\n');
try {
  const source = new Database(job.source, { readonly: true, fileMustExist: true });
  source.pragma('busy_timeout = 5000');
  let headAtStart;
  try {
    headAtStart = head(source);
    source.prepare('VACUUM INTO ?').run(job.temporary);
  } finally {
    source.close();
  }
  const copy = new Database(job.temporary, { readonly: true, fileMustExist: true });
  try {
    const row = copy.prepare('PRAGMA quick_check').get(); // a row in both bindings (libsql's pragma() has no 'simple')
    const check = row ? String(Object.values(row)[0]) : 'no answer';
    const events = copy.prepare('SELECT COUNT(*) AS events FROM events').get().events;
    const meta = copy.prepare("SELECT value FROM meta WHERE key = 'log_identity'").get();
    answer({ ok: true, report: { headAtStart, events, head: head(copy), logIdentity: meta ? meta.value : null, check } });
  } finally {
    copy.close();
  }
} catch (error) {
  answer({ ok: false, error: String((error && error.message) || error), code: error && error.code });
}`;

type CopyReply = { ok: true; report: CopyReport } | { ok: false; error: string; code?: string };

/** Runs the copying process; `stopped` kills it (the promise then rejects once it has exited). */
function copyInChild(job: { source: string; temporary: string; driver: string }, stopped: AbortSignal | undefined) {
  return new Promise<CopyReply>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', COPY_SOURCE, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const kill = () => child.kill('SIGKILL');
    stopped?.addEventListener('abort', kill, { once: true });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      stopped?.removeEventListener('abort', kill);
      const line = stdout.trim().split('\n').pop() ?? '';
      if (stopped?.aborted) reject(new Error('stopped'));
      else if (line.startsWith('{')) resolve(JSON.parse(line) as CopyReply);
      else reject(new Error(`the copying process ended (${signal ?? `code ${code}`}) without an answer: ${stderr.trim()}`));
    });
  });
}

const sizeOf = (file: string): number => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};

/** Syncs a file's (or a directory's) contents to the disk. */
function syncPath(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Why the destination's name cannot be given to the copy (a directory, or a file already there), or null. */
function nameTaken(destination: string): MailboxError | null {
  if (isDirectory(destination)) {
    const example = path.join(destination, `events-${new Date().toISOString().slice(0, 10)}.sqlite`);
    return new MailboxError(
      'VALIDATION_FAILED',
      'Backup file is a directory',
      `${destination} is a directory: mailbox backup writes one file, so name it (e.g. ${example}).`,
      { field: 'destination' },
    );
  }
  return present(destination) ? destinationExists(destination) : null;
}

/**
 * A name beside the one taken, with the time of day added (events-2026-12-01.sqlite: events-2026-12-01-1530.sqlite), one
 * that is free now. The refusal suggested "with the date: events-$(date +%F).sqlite", the very form of the name that was
 * taken when docs/operators.md's line ran a second time that day.
 */
function freeNameBeside(destination: string, now = new Date()): string | null {
  const extension = path.extname(destination);
  const stem = destination.slice(0, destination.length - extension.length);
  const [hours, minutes, seconds] = now.toISOString().slice(11, 19).split(':');
  for (const suffix of [`${hours}${minutes}`, `${hours}${minutes}${seconds}`]) {
    const candidate = `${stem}-${suffix}${extension}`;
    if (!present(candidate)) return candidate;
  }
  return null;
}

const destinationExists = (destination: string) => {
  const free = freeNameBeside(destination);
  return new MailboxError(
    'VALIDATION_FAILED',
    'Backup file exists',
    `${destination} already exists: mailbox backup never overwrites a file. Give a new name` +
      (free === null
        ? ' (e.g. with the date and time: events-$(date +%F-%H%M).sqlite)'
        : `, e.g. ${free} (the time added, UTC)`) +
      ', or move the old backup away first.',
    { field: 'destination', ...(free === null ? {} : { suggestions: [free] }) },
  );
};

/**
 * Gives the checked copy its name, unless something took that name while it was made (another backup to the same
 * file): a hard link fails on an existing name where a rename would replace it. A file system without hard links
 * gets a rename after one more look.
 */
function giveName(temporary: string, destination: string): void {
  try {
    fs.linkSync(temporary, destination);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw destinationExists(destination);
    const taken = nameTaken(destination);
    if (taken !== null) throw taken;
    fs.renameSync(temporary, destination);
    return;
  }
  fs.rmSync(temporary);
}

/** Refuses a destination that exists or whose directory does not, before anything is read. */
function checkDestination(destination: string): void {
  const taken = nameTaken(destination);
  if (taken !== null) throw taken;
  const directory = path.dirname(destination);
  if (!fs.existsSync(directory) || !fs.statSync(directory).isDirectory()) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'No such directory',
      `The directory ${directory} does not exist: create it first (mailbox backup does not create directories, so ` +
        'that a mistyped path fails here instead of filling an unexpected place).',
      { field: 'destination' },
    );
  }
}

const isDirectory = (file: string): boolean => fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true;

/** Anything at that path, a link to nothing included (which existsSync calls absent, and a rename would replace). */
const present = (file: string): boolean => {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
};

const WHILE_COPYING: Partial<Record<StorageCondition, string>> = {
  full: 'the disk holding it is full (free space there, or back up to another disk)',
  io: 'a read or write failed (an I/O error)',
  readonly: 'its directory or disk is read-only',
  cantopen: 'a file could not be opened (may this user read the log and write the directory?)',
};

/** A failure of SQLite's during the copy, said as what an operator can do about it (the driver's error as the cause). */
function backupFailed(source: string, destination: string, error: Error): MailboxError {
  const condition = storageConditionOf(error);
  const reason = (condition !== null && WHILE_COPYING[condition]) || `SQLite: ${error.message}`;
  const failed = new MailboxError(
    'UNAVAILABLE',
    'Backup failed',
    `The backup of ${source} to ${destination} could not be made: ${reason}. Nothing was written to ${destination}.`,
    { field: 'destination' },
  );
  (failed as Error).cause = error;
  return failed;
}

/** Copies the SQLite log at `source` to `destination` (which must not exist); see the header. */
export async function backupSqliteLog(
  source: string,
  destination: string,
  options: SqliteBackupOptions = {},
): Promise<SqliteLogBackup> {
  const file = path.resolve(destination);
  checkDestination(file);
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.partial-${process.pid}`);
  const started = performance.now();
  const estimated = sizeOf(source) + sizeOf(`${source}-wal`);
  // VACUUM INTO writes the copy with a rollback journal of its own beside it (`-journal`).
  const removeTemporary = () => {
    for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(`${temporary}${suffix}`, { force: true });
  };
  let ticker: NodeJS.Timeout | null = null;
  try {
    if (options.signal?.aborted) throw new BackupInterrupted(file);
    if (options.onProgress) {
      const report = options.onProgress;
      ticker = setInterval(() => report({ written: sizeOf(temporary), estimated }), options.progressEveryMs ?? 1000);
    }
    const driver = require.resolve(options.driver ?? defaultSqliteDriver());
    const reply = await copyInChild({ source, temporary, driver }, options.signal).catch((error: unknown) => {
      throw options.signal?.aborted ? new BackupInterrupted(file) : error;
    });
    if (!reply.ok) {
      const cause = Object.assign(new Error(reply.error), { code: reply.code });
      // The log itself is no database SQLite can read: said as every reader says it (not as the destination's failure).
      throw isUnreadableFileError(cause) ? new UnreadableLogFile(source, cause) : backupFailed(source, file, cause);
    }
    const report = reply.report;
    if (report.check !== 'ok') throw new Error(`the copy failed SQLite's quick_check: ${report.check}`);
    const head = report.head === null ? null : BigInt(report.head);
    const headAtStart = report.headAtStart === null ? null : BigInt(report.headAtStart);
    if (headAtStart !== null && (head === null || head < headAtStart)) {
      throw new Error(`the copy ends at position ${report.head ?? 'none'}, before the log's head ${headAtStart} at its start`);
    }
    syncPath(temporary);
    giveName(temporary, file);
    syncPath(path.dirname(file));
    return {
      source: path.resolve(source),
      file,
      events: report.events,
      head,
      headAtStart,
      logIdentity: report.logIdentity,
      bytes: sizeOf(file),
      ms: Math.round(performance.now() - started),
    };
  } catch (error) {
    removeTemporary();
    throw error;
  } finally {
    if (ticker !== null) clearInterval(ticker);
  }
}
