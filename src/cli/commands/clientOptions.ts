/**
 * What every client command shares: where the server is, whose token, human
 * or JSON output, and errors printed as the server's own envelope message.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { MailboxHttpClient } from '../../adapters/http/client/mailboxHttpClient';
import { ADMIN_TOKEN_FILE } from '../../adminToken';
import { refuseEmpty, secretFromFile } from '../../config';
import { MailboxError, isMailboxError } from '../../errors';
import { unknownVariables, unknownVariableWarning } from './envWarnings';
import { inCommandTerms, inFlagTerms, type FlagsByField } from './flagTerms';

export const DEFAULT_URL = 'http://127.0.0.1:7420';

export interface ClientOptions {
  url: string;
  token?: string;
  json?: boolean;
}

export function withClientOptions(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', 'mailbox server URL').env('MAILBOX_URL').default(DEFAULT_URL))
    .addOption(new Option('--token <token>', 'your bearer token').env('MAILBOX_TOKEN'))
    .option('--json', 'print JSON (one object per line) instead of text');
}

/** Where the admin token is looked for, each variable with what to set it to and what unset means. */
const WHEN_EMPTY: Record<string, string> = {
  MAILBOX_ADMIN_TOKEN: 'the admin token, or unset it to look in MAILBOX_ADMIN_TOKEN_FILE, then <MAILBOX_DATA_DIR>/admin.token',
  MAILBOX_ADMIN_TOKEN_FILE: 'the path of a file holding the admin token, or unset it to look in <MAILBOX_DATA_DIR>/admin.token',
  MAILBOX_DATA_DIR: "the server's data directory (its admin.token is read there), or unset it for ./data",
};

/**
 * Admin commands also find the token in MAILBOX_ADMIN_TOKEN, in the file MAILBOX_ADMIN_TOKEN_FILE names (read as the
 * server reads it: one that cannot be read or is empty is refused, a StartupError naming the variable, never passed
 * over for the next place) or, on the server's own machine, in <MAILBOX_DATA_DIR>/admin.token, so a local walkthrough
 * needs no copying. None of them: UNAUTHENTICATED, saying where it looked.
 */
export function adminTokenFallback(env: NodeJS.ProcessEnv = process.env): string {
  // Set but empty (MAILBOX_ADMIN_TOKEN=${ADMIN} with ADMIN unset): refused by serve's rule, in its line. Read as unset,
  // the command went on to ./data/admin.token, the token of whatever server once ran here, and acted with it.
  for (const [variable, form] of Object.entries(WHEN_EMPTY)) refuseEmpty(env, variable, form);
  if (env.MAILBOX_ADMIN_TOKEN !== undefined) return env.MAILBOX_ADMIN_TOKEN;
  const fromFile = secretFromFile(env, 'MAILBOX_ADMIN_TOKEN');
  if (fromFile !== undefined) return fromFile;
  const file = path.resolve(env.MAILBOX_DATA_DIR ?? './data', ADMIN_TOKEN_FILE);
  if (fs.existsSync(file)) return storedAdminToken(file);
  throw new MailboxError(
    'UNAUTHENTICATED',
    'Unauthenticated',
    'No admin token: --token, MAILBOX_TOKEN, MAILBOX_ADMIN_TOKEN and MAILBOX_ADMIN_TOKEN_FILE are unset, and there ' +
      `is no ${file} (the token a server generated, in its MAILBOX_DATA_DIR, default ./data). Pass --token ` +
      "<admin token>, set MAILBOX_ADMIN_TOKEN or MAILBOX_ADMIN_TOKEN_FILE, or run this beside the server's data dir.",
  );
}

/**
 * Runs an admin command (agent add, retire, token) with the admin token: --token or MAILBOX_TOKEN when set (an empty
 * one counts as unset: an agent's variable, left empty where no agent's token is wanted), else adminTokenFallback. MAILBOX_TOKEN is most often an
 * agent's, exported for the client commands (the --help quick start does so), and it comes first: the server's
 * refusal, "needs the admin role; your token is agent @a", did not say where the token came from while the README said
 * that admin commands find ./data/admin.token by themselves. The refusal now says so, and how to give the admin token.
 */
export async function asAdmin<T>(
  options: ClientOptions,
  command: Command,
  run: (client: MailboxHttpClient) => Promise<T>,
): Promise<T> {
  const client = clientFrom(options, options.token || adminTokenFallback());
  try {
    return await run(client);
  } catch (error) {
    if (isMailboxError(error) && error.code === 'UNAUTHENTICATED' && !options.token) throw storedTokenRefused(error);
    if (!isMailboxError(error) || error.code !== 'FORBIDDEN' || command.getOptionValueSource('token') !== 'env') throw error;
    const { error: title, code, message, ...details } = error.envelope;
    const name = [command.parent?.name(), command.name()].filter(Boolean).join(' ');
    throw new MailboxError(
      code,
      title,
      `${message} That token came from MAILBOX_TOKEN, which admin commands take before MAILBOX_ADMIN_TOKEN, ` +
        `MAILBOX_ADMIN_TOKEN_FILE and the server's admin.token: run this one without it ` +
        `(env -u MAILBOX_TOKEN mailbox ${name} ...), or pass --token <admin token>.`,
      details,
    );
  }
}

/**
 * An admin token read from <data dir>/admin.token and refused by the server: the file of a server that generated its
 * token once, while the one running was started with MAILBOX_ADMIN_TOKEN (or on another data dir). The refusal said
 * "The bearer token is not valid for this mailbox (mistyped, or another mailbox's)", naming no file: the operator had
 * typed no token. It now says where the token was read and how to give the server's. Tokens from MAILBOX_ADMIN_TOKEN or
 * MAILBOX_ADMIN_TOKEN_FILE are the operator's own choice: the refusal is left as it is.
 */
function storedTokenRefused(error: MailboxError, env: NodeJS.ProcessEnv = process.env): MailboxError {
  if (env.MAILBOX_ADMIN_TOKEN !== undefined || env.MAILBOX_ADMIN_TOKEN_FILE !== undefined) return error;
  const { error: title, code, message, ...details } = error.envelope;
  const file = path.resolve(env.MAILBOX_DATA_DIR ?? './data', ADMIN_TOKEN_FILE);
  return new MailboxError(
    code,
    title,
    `${message} That token was read from ${file}, where a server stores the admin token it generated: the server at ` +
      'this URL takes another (its MAILBOX_ADMIN_TOKEN, or the admin.token of its own data dir). Set MAILBOX_ADMIN_TOKEN ' +
      'to that token, or pass --token <admin token>.',
    details,
  );
}

/**
 * The token in <data dir>/admin.token. One that cannot be read (a directory, no permission) or is empty is refused
 * naming the file: passed on, an empty one became "No token: pass --token", which sent the user looking for a flag
 * when the file was the problem (the server refuses to start on it too: adminToken.ts).
 */
function storedAdminToken(file: string): string {
  const refuse = (why: string) =>
    new MailboxError(
      'UNAUTHENTICATED',
      'Unauthenticated',
      `No admin token: ${file} ${why}. A server writes its admin token there when it first starts (delete the file ` +
        'and start the server to get a new one), or pass --token <admin token> or set MAILBOX_ADMIN_TOKEN.',
    );
  let token: string;
  try {
    token = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // The server's own file (0600) read by another user: "delete the file and start the server to get a new one" sent
    // the operator to replace the admin token that every script and console of that server holds.
    if (code === 'EACCES' || code === 'EPERM') {
      throw new MailboxError(
        'UNAUTHENTICATED',
        'Unauthenticated',
        `No admin token: ${file} cannot be read (${code}: this user may not read it; the server keeps it for its own ` +
          'user only). Run this command as the user the server runs as, or pass --token <admin token> or set ' +
          'MAILBOX_ADMIN_TOKEN.',
      );
    }
    throw refuse(`cannot be read (${code ?? String(error)})`);
  }
  if (token === '') throw refuse('is empty');
  return token;
}

/**
 * MAILBOX_TOKEN set but empty or blank for a client command (`MAILBOX_TOKEN=${AGENT_TOKEN} mailbox send ...` with
 * AGENT_TOKEN unset, in a script or a compose file) said "No token: pass --token <token> or set MAILBOX_TOKEN", while
 * it was set. It is refused by the rule of every MAILBOX_* variable (refuseEmpty: one line, exit code 2), as the admin
 * commands refuse an empty MAILBOX_ADMIN_TOKEN. Not for them: asAdmin takes an empty MAILBOX_TOKEN as unset (the agent's
 * variable left empty where no agent's token is wanted), so their token is no MAILBOX_TOKEN here.
 */
const TOKEN_WHEN_EMPTY = "your agent's token (mailbox agent add prints it), or unset it and pass --token <token>";

/**
 * MAILBOX_URL set but empty (`MAILBOX_URL=${SERVER}` with SERVER unset) said "The mailbox URL '' is not an http:// or
 * https:// URL", exit 1, where every other empty MAILBOX_* variable is named as empty in one line with exit code 2.
 */
const URL_WHEN_EMPTY = `the server's address, or unset it for ${DEFAULT_URL}`;

export function clientFrom(options: ClientOptions, token = options.token): MailboxHttpClient {
  if (token === process.env.MAILBOX_TOKEN) refuseEmpty(process.env, 'MAILBOX_TOKEN', TOKEN_WHEN_EMPTY);
  if (options.url === process.env.MAILBOX_URL) refuseEmpty(process.env, 'MAILBOX_URL', URL_WHEN_EMPTY);
  if (!token) {
    throw new MailboxError(
      'UNAUTHENTICATED',
      'Unauthenticated',
      'No token: pass --token <token> or set MAILBOX_TOKEN (agents get theirs from `mailbox agent add`).',
    );
  }
  return new MailboxHttpClient(options.url, token);
}

export const print = (text: string): void => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
export const printJson = (value: unknown): void => print(JSON.stringify(value));

/**
 * After a command's text, one `warning:` line for each thing its answer had to say (VIEWS_LAGGING: accepted and
 * durable, not yet in the listings). Only `send` and `agent retire` printed them: `archive` said "Archived" and the
 * next `inbox` still listed the message, with nothing on screen to say why. `except`: one the caller told already.
 */
export function printWarnings(result: { warnings?: ReadonlyArray<{ message?: unknown }> }, except?: unknown): void {
  for (const warning of result.warnings ?? []) {
    if (warning !== except) print(`warning: ${String(warning.message ?? JSON.stringify(warning))}`);
  }
}

/**
 * Runs a command action; a failure prints the envelope's message (or the envelope with --json) and sets exit code 1.
 * `flags`: the command's flags by the API field each sets, which its refusals name instead (flagTerms.ts).
 */
export function action<A extends unknown[]>(
  run: (...args: A) => Promise<void>,
  flags?: FlagsByField,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await run(...args);
    } catch (error) {
      const command = args[args.length - 1] as Command;
      if (!isMailboxError(error)) throw error;
      reportError(flags ? inFlagTerms(error, commandPath(command), flags) : error, Boolean(command?.opts?.().json));
    }
  };
}

/** The words after `mailbox` that name `command`: `inbox`, `task list`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/**
 * Prints a failure as `action` does (the envelope's message, the agent routes it names as commands; or the envelope
 * with --json, as the server wrote it) and sets exit code 1.
 */
export function reportError(error: MailboxError, json: boolean | undefined): void {
  if (json) process.stderr.write(`${JSON.stringify(error.envelope)}\n`);
  else process.stderr.write(`error: ${inCommandTerms(error.message)} (${error.code})\n${hint(error)}`);
  process.exitCode = 1;
}

/**
 * A misspelled variable (MAILBOX_TOKN, MAILBOX_ULR) is read by nothing, so the command ran without it and failed as
 * "No token" or "Cannot reach the mailbox at http://127.0.0.1:7420", naming the default it fell back to and not the
 * typo. `mailbox serve` warns of it at start; a client command says it with its failure (only the likely typos: a
 * variable meant for another tool sharing the prefix is none of its business).
 */
function misspelledVariables(): string[] {
  return unknownVariables(process.env)
    .filter((unknown) => unknown.suggestion !== undefined)
    .map(unknownVariableWarning);
}

function hint(error: MailboxError): string {
  const { valid_shapes: shapes, suggestions, allowed } = error.envelope as Record<string, unknown>;
  const lines: string[] = misspelledVariables();
  if (Array.isArray(shapes)) lines.push(`valid recipients: ${shapes.join(' | ')}`);
  if (Array.isArray(suggestions) && suggestions.length) lines.push(`did you mean: ${suggestions.join(', ')}`);
  // `allowed` is the fields an input takes, but INVALID_TRANSITION's is the states the task may move to (none: nothing
  // to add, the message says so).
  if (Array.isArray(allowed) && allowed.length) {
    lines.push(`${error.code === 'INVALID_TRANSITION' ? 'states you may move it to' : 'allowed fields'}: ${allowed.join(', ')}`);
  }
  return lines.map((line) => `  ${line}\n`).join('');
}
