/**
 * The admin token: MAILBOX_ADMIN_TOKEN when set; else the one stored in
 * <dataDir>/admin.token; else a new one, written there with mode 0600 and
 * printed once (only when generated: a restart never shows it again), once the
 * stores it is to serve have opened.
 */
import fs from 'node:fs';
import path from 'node:path';
import { makeDirectory, OWNER_ONLY } from './support/makeDirectory';
import type { Logger } from 'pino';
import { GOOD_ADMIN_TOKEN, MIN_ADMIN_TOKEN_CHARS, type MailboxConfig } from './config';
import { generateToken } from './application/tokenHash';
import { StartupError } from './startupError';

export const ADMIN_TOKEN_FILE = 'admin.token';

export interface AdminToken {
  token: string;
  source: 'environment' | 'file' | 'generated';
  file?: string;
}

/** Why a file cannot be read, in words (the code stays in the line too). */
const UNREADABLE: Record<string, string> = {
  EISDIR: 'it is a directory',
  ENOENT: 'it is a link to nothing',
  ELOOP: 'it is a loop of links',
  EACCES: 'this user may not read it',
  EPERM: 'this user may not read it',
};

function readStored(file: string, logger: Logger): string {
  let token: string;
  try {
    token = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    // One line and exit code 2, never generated over: it was a stack trace (EISDIR) from `mailbox serve`.
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new StartupError(
      `${file} cannot be read (${code}: ${UNREADABLE[code] ?? (error as Error).message}), and it is where the admin ` +
        'token is kept: move it aside to generate a new one at this start, make it a readable file holding the ' +
        `token, or set MAILBOX_ADMIN_TOKEN to the admin token (${GOOD_ADMIN_TOKEN}).`,
      { field: ADMIN_TOKEN_FILE, file },
      { cause: error },
    );
  }
  if (token.length < MIN_ADMIN_TOKEN_CHARS) {
    // A StartupError: one line and exit code 2 (it was a stack trace), before the log is opened.
    throw new StartupError(
      `${file} holds an admin token of ${token.length} characters, under the ${MIN_ADMIN_TOKEN_CHARS} required: delete ` +
        `the file to generate a new one, or write one of ${MIN_ADMIN_TOKEN_CHARS} or more characters in it (${GOOD_ADMIN_TOKEN}).`,
      { field: ADMIN_TOKEN_FILE, file, length: token.length, limit: MIN_ADMIN_TOKEN_CHARS },
    );
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) logger.warn({ file, mode: mode.toString(8) }, 'admin token file is readable by others; chmod 600 it');
  return token;
}

/**
 * The admin token to start with, nothing written and nothing printed yet: the environment's, the stored one, or a new
 * one (`pending`) that `keep` stores and prints once the mailbox has opened. Generated and shown before the stores were
 * opened, a start refused on them (a read-only log, another mailbox serving the data dir) had already printed "generated
 * now" and written admin.token: a token no running server took (the other one had its own), shown as the one to use.
 */
export function prepareAdminToken(config: MailboxConfig, logger: Logger): AdminToken & { pending: boolean } {
  if (config.adminToken) return { token: config.adminToken, source: 'environment', pending: false };
  const file = path.resolve(config.dataDir, ADMIN_TOKEN_FILE);
  // lstat, not exists: a link to nothing is there too (exists said no; the write then failed EEXIST, a stack trace).
  if (fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined)
    return { token: readStored(file, logger), source: 'file', file, pending: false };
  checkTakesFile(config, file);
  return { token: generateToken('mbx_admin'), source: 'generated', file, pending: true };
}

/**
 * Whether the data dir, when it is there, takes the file the generated token goes to: a file beside it is made and
 * removed at once (the token itself is written once the stores opened). A data dir that takes no new file
 * (MAILBOX_DATA_DIR=/proc) was found only when the token was written, after the stores had opened and logged their
 * lines, and said so in a stack trace (exit code 1). A data dir still to be made is checked with the configuration.
 */
function checkTakesFile(config: MailboxConfig, file: string): void {
  const dir = path.dirname(file);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return;
  const probe = path.join(dir, `.${ADMIN_TOKEN_FILE}.${process.pid}.probe`);
  try {
    fs.writeFileSync(probe, '', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    if (code === 'EEXIST') return; // left by a run killed here: the directory takes files
    throw new StartupError(
      `MAILBOX_DATA_DIR='${config.dataDir}': cannot write ${file} (${code}), where the generated admin token is kept: ` +
        'set MAILBOX_DATA_DIR to a directory this user can write, or set MAILBOX_ADMIN_TOKEN ' +
        `(${GOOD_ADMIN_TOKEN}).`,
      { variable: 'MAILBOX_DATA_DIR', file },
      { cause: error },
    );
  }
  fs.rmSync(probe, { force: true });
}

/**
 * Stores a pending generated token (mode 0600, never over a file) and prints it once; an admin token from the
 * environment or a file is returned as it is. Another process that stored one first wins: its token is returned
 * (source 'file'), for the caller to start with instead.
 */
export function keepAdminToken(
  admin: AdminToken & { pending: boolean },
  logger: Logger,
  print: (text: string) => void,
): AdminToken {
  const { pending, ...token } = admin;
  if (!pending) return token;
  const file = admin.file!;
  makeDirectory(path.dirname(file), OWNER_ONLY);
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600); // wx: never overwrite a token another process just wrote
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { token: readStored(file, logger), source: 'file', file };
    throw error;
  }
  try {
    fs.writeFileSync(fd, `${admin.token}\n`);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw tokenNotWritten(file, error);
  }
  fs.closeSync(fd);
  print(
    `\nAdmin token (generated now and shown only this once; stored 0600 in ${file}):\n\n  ${admin.token}\n\n` +
      'Use it as "Authorization: Bearer <token>" to register agents (POST /v1/agents or `mailbox agent add`).\n',
  );
  return token;
}

/** Why a write found no room, and its remedy, in words (the code stays in the line too). */
export const NO_ROOM: Record<string, [string, string]> = {
  ENOSPC: ['the disk is full', 'free disk space there'],
  EDQUOT: ["this user's disk quota is used up", "free space in this user's quota"],
  EFBIG: ['the file size limit of this process is reached', 'raise it (ulimit -f)'],
};

/**
 * The generated token's file made but not written (a full disk, a quota, a file size limit): it was a stack trace, exit
 * code 1, and the empty admin.token it left refused every later start ("holds an admin token of 0 characters"). The
 * file is removed, and the refusal is one line.
 */
function tokenNotWritten(file: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
  const noRoom = NO_ROOM[code];
  if (noRoom === undefined) return error;
  return new StartupError(
    `cannot write the generated admin token to ${file} (${code}: ${noRoom[0]}); nothing was kept: ${noRoom[1]}, or set ` +
      `MAILBOX_ADMIN_TOKEN (${GOOD_ADMIN_TOKEN}).`,
    { variable: 'MAILBOX_DATA_DIR', file },
    { cause: error },
  );
}
