/**
 * A views file SQLite can no longer read (not a database, or a damaged page:
 * a disk fault, a file overwritten by hand) is not a reason to stop the
 * mailbox: the views are derived, the log is the truth. Nothing is deleted
 * either: the damaged file is moved aside (kept for whoever wants to look at
 * it) and the views are built again from the whole log.
 *
 * - At open: a file SQLite refuses outright (SQLITE_NOTADB, SQLITE_CORRUPT while
 *   reading its schema) is moved aside at once.
 * - Only by the views' owner, the mailbox that projects into them: a separate
 *   reader (heartbeat daemon, audit verify) moving it would leave the running
 *   server writing to the moved file while the reader reads an empty one. A
 *   reader refuses a file it cannot open, saying to restart the server first.
 * - While running: damage found by a read or a write (a page that no query had
 *   touched at open) cannot be repaired under a live connection. The store
 *   leaves a mark beside the file, answers 503 UNAVAILABLE saying what to do,
 *   and the next start sees the mark and moves the file aside before opening.
 */
import fs from 'node:fs';
import { type MailboxError, operatorNeeded } from '../../../errors';
import { GenerationBlocked } from '../../../projections/rebuildGenerations';
import { StartupError } from '../../../startupError';

/**
 * SQLite's own words, from its error's message. Not `instanceof Error`: the binding's errors may come from another
 * realm (a native addon's errors carry the prototypes of the context that loaded it first, e.g. under jest).
 */
export function sqliteSaid(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

/** SQLite's result codes for a file that is not (or no longer) a readable database, extended codes included. */
const DAMAGE_CODES = /^SQLITE_(CORRUPT|NOTADB)(_|$)/;

/** True when SQLite said the file itself is unreadable (not a failure of one statement, a lock or the disk being full). */
export function isDamagedFileError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DAMAGE_CODES.test(code);
}

/** The mark a running store leaves beside a file it found damaged (its text: why). */
export const damageMarkOf = (file: string): string => `${file}.damaged`;

/** Leaves the mark (best effort: a mark that cannot be written leaves the 503 and the log line to say it). */
export function markDamaged(file: string, reason: string, now: Date): void {
  try {
    fs.writeFileSync(damageMarkOf(file), `${now.toISOString()} ${reason}\n`);
  } catch {
    // a read-only or full disk: the answer and the log still say what happened
  }
}

/** Why an earlier run marked the file damaged, or null. */
export function damageMark(file: string): string | null {
  try {
    return fs.readFileSync(damageMarkOf(file), 'utf8').trim();
  } catch {
    return null;
  }
}

/** What readiness says while the file is marked (the mark's text is "<when found> <what SQLite said>"), or null. */
export function markedDamage(file: string): string | null {
  const mark = damageMark(file);
  if (mark === null) return null;
  const [at, ...said] = mark.split(' ');
  return (
    `The views file ${file} is damaged (${said.join(' ')}, found at ${at}); ` +
    'restart the mailbox: it moves the file aside and rebuilds the views from the event log.'
  );
}

/**
 * Moves the file (with its WAL and shared-memory files) aside as `<file>.damaged-<time>`, removes the mark, and
 * returns where the file went. The next open creates a new, empty views file, which the projector builds from the log.
 */
export function moveDamagedAside(file: string, now: Date): string {
  const aside = `${file}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (fs.existsSync(file + suffix)) fs.renameSync(file + suffix, aside + suffix);
  }
  fs.rmSync(damageMarkOf(file), { force: true });
  return aside;
}

/**
 * What a reader of the views (heartbeat daemon, audit verify) says of a file it cannot open, as one line at its
 * start (exit code 2): the owner repairs it.
 */
export function damagedFileRefused(file: string, cause: unknown): StartupError {
  return new StartupError(
    `The views file ${file} is damaged (${sqliteSaid(cause)}); ` +
      'restart the mailbox server first: it moves the file aside and rebuilds the views from the event log.',
    { viewsFile: file },
    { cause, refusal: { error: 'Views file damaged', code: 'UNAVAILABLE' } },
  );
}

/** What a read or a write of a damaged views file answers: retry is pointless until a restart rebuilds the views. */
export function viewsFileDamaged(file: string, cause: unknown): MailboxError {
  const error = operatorNeeded(
    `The views file ${file} is damaged (${sqliteSaid(cause)}); ` +
      'the operator must restart the mailbox, which moves the file aside and rebuilds the views from the event log ' +
      '(no message is lost: the log is intact).',
    'restart the mailbox (it moves the damaged views file aside and rebuilds the views)',
    { viewsFile: file },
  );
  (error as Error).cause = cause;
  return error;
}

/** A lock wait as the refusal says it: '5 s' for the default 5000 ms, '250 ms' otherwise. */
const waitText = (ms: number): string => (ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** SQLite's result codes for a views file another process holds locked (past the busy wait: lockWaitMs). */
const LOCKED_CODES = /^SQLITE_(BUSY|LOCKED)(_|$)/;
/** SQLite's result codes for a views file it cannot open for reading and writing (a directory, no permission, read-only). */
const UNOPENABLE_CODES = /^SQLITE_(CANTOPEN|PERM|READONLY|AUTH)(_|$)/;

/**
 * A views file that is whole but cannot be opened now (locked by another process) or by this user (not a file, no
 * permission, read-only): refused at open with what to do, for the owner and a reader alike; nothing is moved or
 * changed. Null: another failure (a bug, or damage: isDamagedFileError). The commands printed these as INTERNAL
 * 'database is locked' or 'unable to open database file'.
 */
export function unopenableFileRefused(file: string, cause: unknown, lockWaitMs: number): StartupError | null {
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (LOCKED_CODES.test(code)) {
    return new StartupError(
      `The views file ${file} is locked by another process (${sqliteSaid(cause)}): a process holds it in exclusive ` +
        `mode, or in a write that outlasted the ${waitText(lockWaitMs)} wait (MAILBOX_VIEWS_LOCK_WAIT_MS); stop that ` +
        'process or let it finish, then try again. ' +
        'Nothing was changed.',
      { viewsFile: file },
      { cause, refusal: { error: 'Views file locked', code: 'UNAVAILABLE' } },
    );
  }
  if (UNOPENABLE_CODES.test(code)) {
    return new StartupError(
      `The views file ${file} cannot be opened for reading and writing (${sqliteSaid(cause)}): check that it is a ` +
        'file, and that this user may read and write it and the directory it lies in (SQLite writes its -wal and ' +
        '-shm files beside it). Nothing was changed.',
      { viewsFile: file },
      { cause, refusal: { error: 'Views file unreadable', code: 'UNAVAILABLE' } },
    );
  }
  return null;
}

/** A generation's table as SQLite names it when it is gone: `no such table: g3_entries` (`main.` before it, at times). */
const MISSING_TABLE = /no such table: (?:main\.)?(g[0-9]+)_/;

/**
 * The step of a rebuild a lock of the views file stopped: writing its generation (its creation, a page of its copy),
 * switching to it (the switch, or holding the live projector for it), or dropping a generation.
 */
export type RebuildStep = 'write' | 'switch' | 'drop';

/** What the rebuild waited to do, in the words of the lock's line. */
function waitedTo(step: RebuildStep, generation: string): string {
  const named = generation === '' ? 'a new generation' : `generation ${generation}`;
  if (step === 'switch') return `switch the views to ${named}`;
  return `${step} ${named}`;
}

/**
 * What a rebuild (mailbox projections rebuild) says of a views file changed under it, as one line naming the remedy
 * ('Operator action needed'): found damaged (overwritten, truncated, a disk fault), or a generation's tables gone
 * (dropped by another process, or the file replaced by another). No retry mends either; the command printed them as
 * {"error":"Projections command failed","code":"INTERNAL","message":"no such table: g3_state"}. `building`: the
 * generation the rebuild builds (or switches to, or drops). `locked`, for a failure of a step of the rebuild's
 * (RebuildStep): the file locked by another process past the wait (`lockWaitMs`) is GenerationBlocked, said with what
 * likely holds it and what to do. It ended as INTERNAL 'database is locked' (copying), or as SQLite's words alone
 * (a leftover's drop at the start: INTERNAL; the switch: 'The switch to the rebuilt views failed (database is
 * locked)', no word of what holds it). `building` '': the new generation not numbered yet. Null: another failure.
 */
export function rebuildViewsFailure(
  file: string,
  building: string,
  cause: unknown,
  locked?: { lockWaitMs: number; step: RebuildStep },
): MailboxError | GenerationBlocked | null {
  const said = sqliteSaid(cause);
  const gone = MISSING_TABLE.exec(said)?.[1];
  if (locked !== undefined && LOCKED_CODES.test(String((cause as { code?: unknown } | null)?.code))) {
    return new GenerationBlocked(
      building,
      `The views file ${file} is locked by another process (${said}): the rebuild waited ${waitText(locked.lockWaitMs)} ` +
        `(MAILBOX_VIEWS_LOCK_WAIT_MS) to ${waitedTo(locked.step, building)} and gave up. A running mailbox writes the file in ` +
        'transactions of milliseconds: what holds it this long is likely a process with a write transaction left open ' +
        'on it (a sqlite3 shell or a script between BEGIN and COMMIT) or one holding it in exclusive mode.',
      `end the transaction of the process that holds ${file} locked, or stop that process (\`lsof ${file}\` lists ` +
        'every process that has it open, the running mailbox among them); then run `mailbox projections rebuild` again',
      { viewsFile: file },
      { cause },
    );
  }
  let error: MailboxError | null = null;
  if (isDamagedFileError(cause)) {
    error = operatorNeeded(
      `The views file ${file} was found damaged during the rebuild (${said}): restart the mailbox, which moves the ` +
        'file aside and rebuilds the views from the event log (no message is lost: the log is intact).',
      'restart the mailbox (it moves the damaged views file aside and rebuilds the views)',
      { viewsFile: file },
    );
  } else if (gone === building) {
    error = operatorNeeded(
      `The tables of generation ${building} are gone from the views file ${file} while the rebuild built them (${said}): ` +
        'another process dropped them, or replaced the file. Nothing was switched.',
      'make sure nothing else changes the views file while it runs (another rebuild, a script, a restore), then run ' +
        '`mailbox projections rebuild` again',
      { viewsFile: file, generation: building },
    );
  } else if (gone !== undefined) {
    error = operatorNeeded(
      `The tables of generation ${gone} are gone from the views file ${file} (${said}): another process dropped them, ` +
        'or replaced the file, while the rebuild ran.',
      'stop the mailbox, move the views file away and start it again: it builds the views anew from the event log',
      { viewsFile: file, generation: gone },
    );
  }
  if (error !== null) (error as Error).cause = cause;
  return error;
}
