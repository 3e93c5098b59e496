/**
 * The recent record of rejected requests: commands, reads (a listing's bad filter), requests no route answers (404,
 * 405) and calls of an MCP tool that does not exist. A rejection writes no event by design (nothing was decided), yet
 * an operator needs to see which agent keeps sending to a wrong recipient shape, or asking for a route that is not
 * there, and what it was told: a bounded record, newest first (a ring buffer in process, a capped Redis stream when
 * Redis is configured), beside the rejection counters in /metrics.
 */
import { isMailboxError } from '../errors';
import type { Clock } from './runtime';

export interface RejectionRecord {
  at: string;
  /** The authenticated caller; null when the token itself was refused. */
  agent: string | null;
  role: string | null;
  /**
   * The command (send, mark_read, retire_agent, ...) or, for a route without one, its method and path (a route not found:
   * as asked, without its query), or for an MCP read or unknown tool, the tool's name as called, or for a JSON-RPC
   * message refused over MCP, its method (POST /mcp when none could be read). At most 200 characters.
   */
  command: string;
  surface: 'http' | 'mcp';
  /**
   * On HTTP, the route asked: its method and path template (GET /v1/messages/:id), or a path no route answers, as asked
   * (without its query). `command` names a read by its MCP tool (get_message) on both transports. At most 200 characters.
   */
  route?: string;
  code: string;
  status: number;
  message: string;
  /** From the error's own details, when it has them: the recipient refused and what it was offered instead. */
  to?: string;
  /** The entry of a list `to` that was refused (the suggestions are for it, not for the whole list). */
  entry?: string;
  /** The agent a registry command named and did not find (retire, new token): what its suggestions are for. */
  identity?: string;
  suggestions?: string[];
  field?: string;
}

export interface RejectionLog {
  /** Records one rejection; never throws into the caller's request (a failure to record is logged by the adapter). */
  record(rejection: RejectionRecord): void;
  /** The newest `limit` records, newest first. */
  recent(limit: number): Promise<RejectionRecord[]>;
  readonly capacity: number;
  readonly backend: 'memory' | 'redis';
  close(): Promise<void>;
}

export const DEFAULT_REJECTION_CAPACITY = 1000;
const MAX_MESSAGE_CHARS = 500;
const MAX_COMMAND_CHARS = 200;

/**
 * A bearer token as the mailbox issues them (tokenHash.ts: `mbx_` or `mbx_admin_`, then 43 characters of base64url),
 * or the start of one (20 characters or more of it).
 */
const TOKEN_SHAPED = /mbx_[A-Za-z0-9_-]{20,}/g;
export const TOKEN_NOT_SHOWN = 'mbx_<a token, not shown>';

export const ADMIN_TOKEN_NOT_SHOWN = '<the admin token, not shown>';

/**
 * The forms of the admin token a record never keeps: it may be any 32 characters or more (MAILBOX_ADMIN_TOKEN,
 * admin.token), not token-shaped, so it is looked for as sent, percent-encoded (in a path) and JSON-escaped (quoted).
 */
const formsOf = (adminToken: string | undefined): string[] =>
  adminToken ? [...new Set([adminToken, encodeURIComponent(adminToken), JSON.stringify(adminToken).slice(1, -1)])] : [];

/**
 * `text` with every token in it replaced, then cut to `max` characters. A token pasted where something else goes (an
 * agent's own token as the recipient, a message id or a path) was kept as sent in the refusal's message, its `to`
 * and its route, where every auditor reading the rejections could take it and act as that agent. The admin token goes
 * first (a custom one may hold text of a token's shape), and both before the cut (which would keep the start of one
 * that straddles it).
 */
function kept(text: string, max: number, adminForms: readonly string[]): string {
  let shown = text;
  for (const form of adminForms) shown = shown.split(form).join(ADMIN_TOKEN_NOT_SHOWN);
  return shown.replace(TOKEN_SHAPED, TOKEN_NOT_SHOWN).slice(0, max);
}

/** The refused `to` as one line: a list (`["@b", "neo-gpt"]`) as its entries joined, so the wrong entry shows. */
function recipientText(to: unknown): { to?: string } {
  if (typeof to === 'string') return { to };
  if (Array.isArray(to) && to.every((entry) => typeof entry === 'string')) return { to: to.join(', ') };
  return {};
}

/**
 * A record of `error`, keeping only the details an operator needs (never a message body); its texts as the request
 * gave them, until HidingRejectionLog records it (no token in them, each bounded). `at` is read from `clock`, the
 * mailbox's (injected in tests), as every other time the mailbox records: the wall clock stamped it, so a record stood
 * apart from the events and views of a mailbox on another clock.
 */
export function rejectionOf(
  error: unknown,
  clock: Clock,
  context: Pick<RejectionRecord, 'agent' | 'role' | 'command' | 'surface' | 'route'>,
): RejectionRecord {
  const at = clock.now().toISOString();
  if (!isMailboxError(error)) {
    return { at, ...context, code: 'INTERNAL', status: 500, message: 'An unexpected error (see the server log).' };
  }
  const { to, entry, identity, suggestions, field } = error.envelope;
  return {
    at,
    ...context,
    code: error.code,
    status: error.status,
    message: error.message,
    ...recipientText(to),
    ...(typeof entry === 'string' ? { entry } : {}),
    ...(typeof identity === 'string' ? { identity } : {}),
    ...(Array.isArray(suggestions) ? { suggestions: suggestions.filter((s) => typeof s === 'string').slice(0, 10) } : {}),
    ...(typeof field === 'string' ? { field } : {}),
  };
}

/**
 * The rejection log the mailbox records in (the composition root wraps the adapter in it, with the admin token this
 * mailbox was started with): each record's texts a request could fill are kept without a token, nor the admin token,
 * and bounded, before the adapter keeps them, so that every auditor may read them.
 */
export class HidingRejectionLog implements RejectionLog {
  private readonly adminForms: string[];

  constructor(
    private readonly inner: RejectionLog,
    adminToken: string | undefined,
  ) {
    this.adminForms = formsOf(adminToken);
  }

  get capacity(): number {
    return this.inner.capacity;
  }

  get backend(): RejectionLog['backend'] {
    return this.inner.backend;
  }

  record(rejection: RejectionRecord): void {
    const text = (value: string, max = 200) => kept(value, max, this.adminForms);
    const { command, route, message, to, entry, identity, suggestions, field } = rejection;
    this.inner.record({
      ...rejection,
      command: text(command, MAX_COMMAND_CHARS), // an unknown route or tool is named as asked: bounded
      ...(route !== undefined ? { route: text(route, MAX_COMMAND_CHARS) } : {}),
      message: text(message, MAX_MESSAGE_CHARS),
      ...(to !== undefined ? { to: text(to) } : {}),
      ...(entry !== undefined ? { entry: text(entry) } : {}),
      ...(identity !== undefined ? { identity: text(identity) } : {}),
      ...(suggestions !== undefined ? { suggestions: suggestions.map((s) => text(s)) } : {}),
      ...(field !== undefined ? { field: text(field) } : {}),
    });
  }

  recent(limit: number): Promise<RejectionRecord[]> {
    return this.inner.recent(limit);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
