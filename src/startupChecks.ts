/**
 * What `mailbox serve` checks before it creates anything (no admin token generated, no file
 * written, no store opened while another setting is still wrong), and the translation of what
 * can only fail later (a port in use, an unreachable Redis) into one StartupError line:
 * the variable, the bad value, the fix.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { redisVariable, type MailboxConfig } from './config';
import { withoutCredentials } from './support/urlCredentials';
import { FETCH_BLOCKED_PORT_REASON, FETCH_BLOCKED_PORTS } from './support/fetchBlockedPorts';
import { isMailboxError, type ErrorCode } from './errors';
import { StartupError, isStartupError } from './startupError';
import { InvalidStoredEvent } from './events/readEvent';
import { NO_ROOM } from './adminToken';
import { isEsdbUrl } from './adapters/eventstore/esdbClientCompat';
import { esdbSettings } from './adapters/eventstore/esdbSettings';
import { storageConditionOf, UnreadableLogFile, type StorageCondition } from './adapters/eventstore/sqliteErrors';
import { readRedisCaFile, validateRedisUrl } from './adapters/projections/redisConnection';
import { sqliteLogFile } from './adapters/eventStoreFactory';
import { sqliteViewsFile } from './adapters/projectionFactory';

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** A config error already phrased by a validator (MailboxError with a field) becomes a StartupError as is. */
function asStartupError(check: () => void): void {
  try {
    check();
  } catch (error) {
    if (isMailboxError(error)) throw new StartupError(error.message, { variable: error.envelope.field }, { cause: error });
    throw error;
  }
}

export function checkHost(host: string): void {
  if (net.isIP(host) || host === 'localhost') return;
  // Dotted digits that are not an IPv4 address (999.1.1.1) would otherwise be looked up as a host name.
  if (/^[\d.]+$/.test(host) || !HOST_NAME.test(host)) {
    throw new StartupError(
      `MAILBOX_HOST='${host}' is not an IP address or host name: set MAILBOX_HOST to an address of this ` +
        'machine (127.0.0.1 for loopback, 0.0.0.0 for every interface).',
      { variable: 'MAILBOX_HOST' },
    );
  }
}

/**
 * A port fetch refuses to connect to (support/fetchBlockedPorts.ts) is refused at start: a mailbox served there answered
 * curl, but no client of its own (the CLI, `mailbox mcp`, the console, /docs, the image's health check) could reach it.
 */
export function checkPortReachable(port: number): void {
  if (!FETCH_BLOCKED_PORTS.has(port)) return;
  throw new StartupError(
    `MAILBOX_PORT='${port}' is not a port to serve on: port ${port} is ${FETCH_BLOCKED_PORT_REASON}, so the mailbox ` +
      'CLI, `mailbox mcp`, the console and /docs could not reach the mailbox there; set MAILBOX_PORT to another port ' +
      '(default 7420; 0 picks a free one).',
    { variable: 'MAILBOX_PORT' },
  );
}

/** The directory a path will be created in must be a directory we can write: not a file, not read-only. */
export function checkDirectoryPath(variable: string, value: string, dir: string): void {
  refuseUnexpanded(variable, value, dir);
  const existing = nearestDirectory(variable, value, dir);
  try {
    fs.accessSync(existing, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw new StartupError(
      `${variable}='${value}' is not writable (${existing} refuses this user): set ${variable} to a directory ` +
        'this user can write, or fix its permissions.',
      { variable },
    );
  }
  checkTakesDirectory(variable, value, existing, dir);
}

/**
 * A path that a shell would have expanded but nothing did (`~/mbx`, `$HOME/mbx`, `${HOME}/mbx`: a quoted assignment, a
 * systemd unit's Environment=, an env file): the mailbox made a directory named `~` (or `$HOME`) in its working
 * directory, printed the token there and served, the data where nobody looks (and `rm -rf ~...` one slip from the
 * home directory). Refused while the directory it names is not there yet; one there already keeps serving its data.
 */
function refuseUnexpanded(variable: string, value: string, dir: string): void {
  const written = variable === 'MAILBOX_EVENTSTORE_URL' ? value.slice('sqlite:'.length) : value;
  const word = /^~[\w.-]*(?=\/|$)/.exec(written)?.[0] ?? /\$(\{\w+\}|\w+)/.exec(written)?.[0];
  if (word === undefined || fs.existsSync(path.resolve(dir))) return;
  const expanded = written
    .replace(/^~(?=\/|$)/, os.homedir())
    .replace(/\$\{(\w+)\}|\$(\w+)/g, (all, braced?: string, bare?: string) => process.env[braced ?? bare!] || all);
  const example = /^~|\$/.test(expanded) ? '' : `, e.g. ${written === value ? expanded : `sqlite:${expanded}`}`;
  throw new StartupError(
    `${variable}='${value}' holds ${word}, which only a shell expands (taken as written, it names ` +
      `${path.resolve(written)}): set ${variable} to the path written out${example}.`,
    { variable },
  );
}

/**
 * The first directory `dir` needs under `existing` (dir itself, or its first missing level), made and removed at once.
 * A parent that is there and writable may still take no new entry (/proc, /sys as root: mkdir answers ENOENT or
 * EPERM), which was found only when the stores opened, after the start had logged its first lines (the event store
 * chosen, the views in memory): a refused start printed them above its refusal. Nothing is left behind; a directory
 * there already is not looked at (its files are the stores' to open).
 */
function checkTakesDirectory(variable: string, value: string, existing: string, dir: string): void {
  const target = path.resolve(dir);
  if (existing === target) return;
  const first = path.join(existing, path.relative(existing, target).split(path.sep)[0]);
  try {
    fs.mkdirSync(first, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    if (code === 'EEXIST') return; // made meanwhile (another process starting on it)
    const why = code === 'ENOENT' ? ': its parent takes no new entries' : '';
    throw new StartupError(
      `${variable}='${value}': cannot create the directory ${first} (${code}${why}); ${placeElsewhere(variable)}.`,
      { variable },
      { cause: error },
    );
  }
  try {
    fs.rmdirSync(first);
  } catch {
    // Used meanwhile by another process starting on it: it stays, as that process made it.
  }
}

/**
 * The nearest part of `dir` that is there (dir itself, or the parent it would be made in), refused when it is a file:
 * no directory can be there. What a command that only reads the data dir checks too (checkStoreNames).
 */
function nearestDirectory(variable: string, value: string, dir: string): string {
  let existing = path.resolve(dir);
  // lstat, not exists: a link to nothing is there, and nothing can be made under it (exists said missing, and the
  // check passed on the link's parent; the first mkdir then failed with a stack trace).
  while (!isThere(variable, value, existing)) existing = path.dirname(existing);
  const stat = reachable(variable, value, existing);
  if (!stat.isDirectory()) {
    throw new StartupError(
      `${variable}='${value}' cannot be a directory: ${existing} is a file; set ${variable} to a directory path.`,
      { variable },
    );
  }
  return existing;
}

/**
 * Whether anything is at `file`, a link to nothing included (a path through a file is not there: ENOTDIR); a path
 * that cannot be looked at (a name too long, a parent this user may not search) is refused in one line.
 */
function isThere(variable: string, value: string, file: string): boolean {
  try {
    return fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return false;
    // EACCES: a directory on the way this user may not search. Node's own words repeated the code and named the call
    // ("EACCES: EACCES: permission denied, lstat '<dir>'"), not the directory that refuses.
    const why =
      code === 'ENAMETOOLONG'
        ? 'the path is too long'
        : code === 'EACCES'
          ? `${searchRefusedBy(file)} refuses this user: it may not look inside`
          : (error as Error).message.replace(`${code}: `, '');
    throw new StartupError(
      `${variable}='${value}': ${file} cannot be used (${code ?? 'unknown error'}: ${why}); ${placeElsewhere(variable)}` +
        `${code === 'EACCES' ? ', or fix its permissions' : ''}.`,
      { variable },
      { cause: error },
    );
  }
}

/** The first directory on the way to `file` that this user may not search (look inside), else its parent. */
function searchRefusedBy(file: string): string {
  let dir = path.parse(file).root;
  for (const part of path.relative(dir, path.dirname(file)).split(path.sep).filter(Boolean)) {
    try {
      fs.accessSync(dir, fs.constants.X_OK);
    } catch {
      return dir;
    }
    dir = path.join(dir, part);
  }
  return dir;
}

/** The remedy of a place that cannot hold the files: another directory (the event store's variable names a file in one). */
const placeElsewhere = (variable: string): string =>
  variable === 'MAILBOX_EVENTSTORE_URL'
    ? `set ${variable} to sqlite:<a file in a directory this user can write>`
    : `set ${variable} to a directory this user can write`;

/** The entry at `existing` as its links lead, or a StartupError naming the link that leads nowhere. */
function reachable(variable: string, value: string, existing: string): fs.Stats {
  try {
    return fs.statSync(existing);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    const link = fs.lstatSync(existing).isSymbolicLink() ? fs.readlinkSync(existing) : null;
    const why =
      link === null
        ? `${existing} cannot be reached (${code})`
        : `${existing} is a link to ${link}, which ${code === 'ENOENT' ? 'does not exist (a volume not mounted?)' : `cannot be reached (${code})`}`;
    throw new StartupError(
      `${variable}='${value}': ${why}; create it, or ${placeElsewhere(variable)}.`,
      { variable },
      { cause: error },
    );
  }
}

/**
 * `writable`: the file will be written there (the server); a command that only reads the log (audit, projections,
 * the heartbeat) is not refused for a directory it could not write, only for a URL that names no log.
 */
export function checkEventStoreUrl(url: string, { writable = true }: { writable?: boolean } = {}): void {
  const variable = 'MAILBOX_EVENTSTORE_URL';
  if (url === 'memory:') return;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === '') {
      throw new StartupError(
        `${variable}='${url}' names no file: use sqlite:<path to a file>, e.g. sqlite:./data/events.sqlite, ` +
          'or unset it for SQLite in MAILBOX_DATA_DIR.',
        { variable },
      );
    }
    if (writable) checkDirectoryPath(variable, url, path.dirname(path.resolve(file)));
    else nearestDirectory(variable, url, path.dirname(path.resolve(file)));
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
      throw new StartupError(`${variable}='${url}' names a directory: use sqlite:<path to a file>.`, { variable });
    }
    return;
  }
  if (isEsdbUrl(url)) {
    asStartupError(() => esdbSettings(url));
    return;
  }
  throw new StartupError(
    `${variable}='${withoutCredentials(url)}' is not supported: use esdb://host:2113?tls=false (or kurrentdb://), ` +
      'sqlite:<file>, memory:, or unset it for SQLite in MAILBOX_DATA_DIR.',
    { variable },
  );
}

/** Every check that needs no server: run before anything is created. */
export function checkConfig(config: MailboxConfig): void {
  checkHost(config.host);
  checkPortReachable(config.port);
  if (config.eventStoreUrl !== undefined) checkEventStoreUrl(config.eventStoreUrl);
  checkRedisNames(config);
  // The data dir holds the SQLite log (no MAILBOX_EVENTSTORE_URL), the generated admin token (no MAILBOX_ADMIN_TOKEN)
  // and the views file of a log elsewhere (MAILBOX_VIEWS=sqlite).
  if (config.eventStoreUrl === undefined || config.adminToken === undefined || config.views === 'sqlite') {
    checkDirectoryPath('MAILBOX_DATA_DIR', config.dataDir, config.dataDir);
  }
  checkSqliteFilesWritable(config);
}

/**
 * The SQLite files the server writes that are there already (the log, the views file, their -wal and -shm) must be
 * files this user can write. SQLite found out while opening them, after a -wal and -shm had been made beside a
 * read-only log, and said only "a file there, or the disk, is read-only": which one, and how to fix it, was left to
 * guess. A file missing, or not a file, is left to the open (which makes it, or says what it is).
 */
function checkSqliteFilesWritable(config: MailboxConfig): void {
  checkSqliteFiles(
    config,
    fs.constants.R_OK | fs.constants.W_OK,
    (file, code, variable) =>
      `${file} is read-only for this user (${code}): make it writable by this user (chmod u+w, chown it to this user, ` +
      `or chattr -i), or ${placeElsewhere(variable)}.`,
  );
}

/**
 * A command that only reads the server's files (audit, projections status, heartbeat) run by a user who may not read
 * them (the server's, 0600): SQLite said "unable to open database file", an INTERNAL error naming no file.
 */
function checkSqliteFilesReadable(config: MailboxConfig): void {
  checkSqliteFiles(
    config,
    fs.constants.R_OK,
    (file, code) =>
      `${file} cannot be read by this user (${code}; the server keeps its files for its own user only): run this ` +
      'command as the user the server runs as, or give this user read access to it.',
    { error: 'Files not readable by this user', code: 'UNAVAILABLE' },
  );
}

/** Each SQLite file there already (log, views, their -wal and -shm) `access`ible as asked, else `refused`'s line. */
function checkSqliteFiles(
  config: MailboxConfig,
  access: number,
  refused: (file: string, code: string, variable: string) => string,
  refusal?: { error: string; code: ErrorCode },
): void {
  const log = sqliteLogFile(config);
  const views = sqliteViewsFile(config);
  for (const base of [log, views]) {
    if (base === null) continue;
    // The views file sits in the data dir when the log is not a SQLite file (EventStoreDB with MAILBOX_VIEWS=sqlite).
    const { where, variable } =
      log === null ? { where: `MAILBOX_DATA_DIR='${config.dataDir}'`, variable: 'MAILBOX_DATA_DIR' } : sqliteLocation(config);
    const refusedFile = (file: string, error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      return new StartupError(`${where}: ${refused(file, code, variable)}`, { variable, file }, { cause: error, refusal });
    };
    for (const file of [base, `${base}-wal`, `${base}-shm`]) {
      try {
        // A data dir this user may not look inside (the server makes it 0700) refuses the stat itself: it was INTERNAL
        // "EACCES: permission denied, stat '<file>'" for backup, audit and projections run as another user.
        if (fs.statSync(file, { throwIfNoEntry: false })?.isFile() !== true) continue;
        fs.accessSync(file, access);
      } catch (error) {
        throw refusedFile(file, error);
      }
    }
  }
}

/**
 * The checks of checkConfig that a command on the server's stores needs (mailbox audit, projections, heartbeat): that
 * the variables name a log and a Redis as the server reads them, in the server's words. Not the host or port (it
 * serves nothing) nor the data dir's writability (it only reads there, or writes to a log the server made).
 */
export function checkStoreNames(config: MailboxConfig): void {
  if (config.eventStoreUrl !== undefined) checkEventStoreUrl(config.eventStoreUrl, { writable: false });
  checkRedisNames(config);
  // A data dir that is a file (or lies under one) holds no log: it was "There is no event log at <file>/events.sqlite"
  // (exit 1, "nothing to work on"), sending the operator to look for a log, where serve says what is wrong with it.
  const dataDir = path.resolve(config.dataDir);
  if ([sqliteLogFile(config), sqliteViewsFile(config)].some((file) => file !== null && path.dirname(file) === dataDir))
    nearestDirectory('MAILBOX_DATA_DIR', config.dataDir, config.dataDir);
  checkSqliteFilesReadable(config);
}

/** The Redis URL, and the CA file it is to be reached with (missing, a directory, unreadable or no certificate). */
export function checkRedisNames(config: MailboxConfig): void {
  if (config.redisUrl === undefined) return;
  asStartupError(() => validateRedisUrl(config.redisUrl!, redisVariable(config)));
  if (config.redisTlsCaFile !== undefined) asStartupError(() => readRedisCaFile(config.redisTlsCaFile!));
}

/**
 * Binds host:port once (port 0 too: that still checks the address) and lets go, so that a port in use or an address of another machine is
 * reported before the admin token is generated or a store opened (the real listen still
 * translates the same errors, should another process take the port in between).
 */
export async function checkPortFree(config: MailboxConfig): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error) => reject(translateStartupError(error, config)));
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The host part of an EventStoreDB connection string (credentials and options left out), to name in errors. */
export function esdbHosts(url: string): string {
  const rest = url.replace(/^[a-z+]+:\/\//i, '').replace(/^[^@/]*@/, '');
  return rest.split(/[/?]/)[0] || url;
}

/** A failure met while opening the stores or the port, as one StartupError line (or unchanged when not ours to phrase). */
export function translateStartupError(error: unknown, config: MailboxConfig): unknown {
  if (isStartupError(error)) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const { host, port } = config;
  switch (code) {
    case 'EADDRINUSE':
      return new StartupError(
        `port ${port} on ${host} is in use: another mailbox? stop it, or set MAILBOX_PORT to a free port ` + '(0 picks one).',
        { variable: 'MAILBOX_PORT' },
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
      return new StartupError(
        `MAILBOX_HOST='${host}' is not an address of this machine: set MAILBOX_HOST to one of its addresses ` +
          '(127.0.0.1 for loopback, 0.0.0.0 for every interface).',
        { variable: 'MAILBOX_HOST' },
        { cause: error },
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `MAILBOX_HOST='${host}' does not resolve to an address: set MAILBOX_HOST to an IP address of this ` +
          'machine (127.0.0.1 for loopback).',
        { variable: 'MAILBOX_HOST' },
        { cause: error },
      );
    case 'EACCES':
      if ((error as { syscall?: string }).syscall === 'listen') {
        return new StartupError(
          `port ${port} needs privileges this user lacks: set MAILBOX_PORT to 1024 or above.`,
          { variable: 'MAILBOX_PORT' },
          { cause: error },
        );
      }
      break;
    default:
      break;
  }
  if (error instanceof UnreadableLogFile) return unreadableLogRefusal(error, config);
  // A stored event this build cannot read, met by the views' catch-up at start (written into the log by something
  // else, or by a newer build): its own sentence names where, what and the remedies. It was a stack trace, exit code 1.
  if (error instanceof InvalidStoredEvent && error.position >= 0n)
    return new StartupError(
      error.message,
      { variable: config.eventStoreUrl ? 'MAILBOX_EVENTSTORE_URL' : 'MAILBOX_DATA_DIR', position: error.position.toString() },
      { cause: error, refusal: { error: 'Event log unreadable', code: 'UNAVAILABLE' } },
    );
  if (code === 'ENOENT' && (error as { syscall?: string }).syscall === 'mkdir') {
    // Its parent is there but takes no new directory (a pseudo file system such as /proc; support/makeDirectory.ts).
    const dir = (error as NodeJS.ErrnoException).path ?? config.dataDir;
    const { where, variable } = placeOf(dir, config);
    return new StartupError(
      `${where}: cannot create the directory ${dir} (ENOENT: its parent takes no new entries); ${placeElsewhere(variable)}.`,
      { variable },
      { cause: error },
    );
  }
  // No room for a file the start writes beside the log (the views' owner file): it said to move MAILBOX_DATA_DIR elsewhere,
  // where a start finds none of this mailbox's messages.
  const noRoom = code === undefined ? undefined : NO_ROOM[code];
  if (noRoom !== undefined) {
    const file = (error as NodeJS.ErrnoException).path ?? config.dataDir;
    return new StartupError(
      `MAILBOX_DATA_DIR='${config.dataDir}': cannot write ${file} (${code}: ${noRoom[0]}); ${noRoom[1]}, then start again.`,
      { variable: 'MAILBOX_DATA_DIR' },
      { cause: error },
    );
  }
  // EPERM: a place that takes no directory even from root (/sys, some network and container mounts); it was a stack trace.
  if (code === 'EACCES' || code === 'EPERM' || code === 'ENOTDIR' || code === 'EROFS') {
    const file = (error as NodeJS.ErrnoException).path ?? config.dataDir;
    return new StartupError(
      `MAILBOX_DATA_DIR='${config.dataDir}': cannot write ${file} (${code}); set MAILBOX_DATA_DIR to a ` + 'writable directory.',
      { variable: 'MAILBOX_DATA_DIR' },
      { cause: error },
    );
  }
  const condition = storageConditionOf(error);
  const storage = condition === null ? undefined : AT_START[condition];
  if (storage !== undefined) {
    const { where, variable } = sqliteLocation(config);
    return new StartupError(
      `${where}: ${storage} (SQLite: ${(error as Error).message.split('\n')[0]}); ${
        condition === 'full' ? 'free disk space there, or ' : ''
      }set ${variable} to a writable place with room.`,
      { variable },
      { cause: error },
    );
  }
  // libsql reports an unopenable file as ConnectionFailed(..., 14) (SQLITE_CANTOPEN); better-sqlite3 as 'unable to open database file'.
  if (error instanceof Error && /ConnectionFailed|SQLITE_CANTOPEN|unable to open database/i.test(error.message)) {
    const { where, variable } = sqliteLocation(config);
    return new StartupError(
      `${where}: SQLite cannot open its file (${error.message.split('\n')[0]}); set ${variable} to a writable ` + 'place.',
      { variable },
      { cause: error },
    );
  }
  return error;
}

/**
 * The variable that placed a directory that could not be made (`dir`: the level whose mkdir failed, so the directory
 * asked for is `dir` or below it): a sqlite: event store URL when its log's directory is, unless the data dir is too
 * and was being made first (for the generated admin token), else the data dir.
 */
function placeOf(dir: string, config: MailboxConfig): { where: string; variable: string } {
  const url = config.eventStoreUrl;
  const log = url?.startsWith('sqlite:') ? path.resolve(url.slice('sqlite:'.length)) : null;
  const forLog = log !== null && isWithin(dir, path.dirname(log));
  const forDataDir = isWithin(dir, config.dataDir) && config.adminToken === undefined;
  return forLog && !forDataDir
    ? { where: `MAILBOX_EVENTSTORE_URL='${url}'`, variable: 'MAILBOX_EVENTSTORE_URL' }
    : { where: `MAILBOX_DATA_DIR='${config.dataDir}'`, variable: 'MAILBOX_DATA_DIR' };
}

/** Whether `file` is `dir` or below it (both resolved). */
const isWithin = (dir: string, file: string): boolean => {
  const relative = path.relative(path.resolve(dir), path.resolve(file));
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/** The variable that placed the SQLite files, with its value: the data dir, or a sqlite: event store URL. */
/**
 * A log file SQLite cannot read (no database at all, or damaged), in one line naming it: serve's refusal at start and,
 * for a command that only reads the log (`reader`: audit, projections), the same sentence with a reader's remedies (it
 * creates no log in its place), as their 'Event log unreadable' envelope, exit code 2. They said it as INTERNAL
 * 'file is not a database'.
 */
export function unreadableLogRefusal(
  error: UnreadableLogFile,
  config: MailboxConfig,
  { reader = false }: { reader?: boolean } = {},
): StartupError {
  const { where, variable } = sqliteLocation(config);
  const remedy = reader
    ? `Restore it from a backup (mailbox backup writes one), or point ${variable} at the ${
        variable === 'MAILBOX_DATA_DIR' ? 'data directory' : 'log'
      } the server uses. Nothing was read or changed.`
    : `Restore it from a backup, or move it aside (a new, empty log is created in its place), or set ${variable} to another place.`;
  return new StartupError(
    `${where}: the event log ${error.message}: it is damaged, or not a log at all. ${remedy}`,
    { variable, file: error.file },
    { cause: error, refusal: { error: 'Event log unreadable', code: 'UNAVAILABLE' } },
  );
}

/** A reader's failure: a log SQLite cannot read as unreadableLogRefusal says it (reader's remedies), anything else as it is. */
export const readerLogRefusal = (error: unknown, config: MailboxConfig): unknown =>
  error instanceof UnreadableLogFile ? unreadableLogRefusal(error, config, { reader: true }) : error;

function sqliteLocation(config: MailboxConfig): { where: string; variable: string } {
  return config.eventStoreUrl === undefined
    ? { where: `MAILBOX_DATA_DIR='${config.dataDir}'`, variable: 'MAILBOX_DATA_DIR' }
    : { where: `MAILBOX_EVENTSTORE_URL='${config.eventStoreUrl}'`, variable: 'MAILBOX_EVENTSTORE_URL' };
}

/**
 * A condition of the disk SQLite met while the stores were opened (a full disk printed a stack trace before), as
 * said at start (an unopenable file has its own line above; a lock is left as it was). While serving, the same
 * conditions are 503s: adapters/eventstore/sqliteErrors.ts.
 */
const AT_START: Partial<Record<StorageCondition, string>> = {
  full: 'the disk is full',
  io: 'the disk failed a read or write (an I/O error)',
  readonly: 'a file there, or the disk, is read-only',
};
