/**
 * A client of the HTTP API (used by the CLI and by `mailbox mcp`). Error
 * responses become the same MailboxError, envelope unchanged, so a caller
 * sees exactly what the server said.
 */
import type { DeliveryLedger } from '../../../application/deliveryQueries';
import type {
  ArchiveResult,
  BulkReadResult,
  ReadAllResult,
  ReadResult,
  Registration,
  SendOutcome,
  SendResult,
  UnarchiveResult,
} from '../../../application/mailboxCommands';
import type { HeartbeatAnswer, InboxCount, MessageDetail, WakeStreamUpdate } from '../../../application/mailboxQueries';
import { MailboxError, isMailboxError, type ErrorCode, type ErrorEnvelope } from '../../../errors';
import type { StoredEvent } from '../../../events/types';
import type { AgentView, MessagePage } from '../../../projections/projectionStore';
import type { AgentApi } from '../../../application/agentApi';
import type { A2aTask } from '../../../application/taskA2a';
import type { TaskResult } from '../../../application/taskCommands';
import type { TaskPage } from '../../../application/taskQueries';
import { FETCH_BLOCKED_PORT_REASON, FETCH_BLOCKED_PORTS } from '../../../support/fetchBlockedPorts';
import { readSse } from './sseReader';
import { HEARTBEAT_HEADER, StreamSilence } from './streamSilence';

/** What a wake stream carries: sync, wakes, and its end (`shutdown` when the server stops, `revoked` when the token stopped working). */
export type ClientWakeEvent =
  | WakeStreamUpdate
  | { event: 'shutdown'; data: { reason: string } }
  | { event: 'revoked'; data: { identity: string; reason: string } };

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The server's answer to a send that replays one made already with its Idempotency-Key carries it, `true`. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** Query values: arrays and objects JSON-encoded (the server accepts both), the rest as text. */
export function encodeQuery(query: Record<string, unknown> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

const isEnvelope = (value: unknown): value is ErrorEnvelope =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ErrorEnvelope).code === 'string' &&
  typeof (value as ErrorEnvelope).message === 'string';

export /** Printable ASCII: what a header value carries as typed. */
const HEADER_SAFE = /^[\x20-\x7e]*$/;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A token is printable ASCII. One holding another character (pasted with a stray ✓ or a line break) could not be
 * sent at all, and fetch's refusal was reported as 'Cannot reach the mailbox ... is `mailbox serve` running?'.
 */
function checkedToken(token: string): string {
  // Whitespace at either end is dropped by fetch as by every HTTP client (a token read from a file with its line feed).
  const lead = /^[\t\n\r ]*/.exec(token)![0].length;
  const characters = [...token.slice(lead).replace(/[\t\n\r ]+$/, '')];
  const at = characters.findIndex((character) => !HEADER_SAFE.test(character));
  if (at < 0) return token;
  const index = lead + at;
  const codePoint = characters[at].codePointAt(0)!;
  throw new MailboxError(
    'UNAUTHENTICATED',
    'Unauthenticated',
    `The token (--token or MAILBOX_TOKEN) holds U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} at index ` +
      `${index}, which no token holds (a token is printable ASCII, e.g. mbx_...): check what was pasted. Nothing was sent.`,
  );
}

/** The port of a URL that fetch refused as a bad port (support/fetchBlockedPorts.ts), else null. */
function blockedPortOf(url: string): number | null {
  const port = Number(new URL(url).port);
  return FETCH_BLOCKED_PORTS.has(port) ? port : null;
}

function errorFromResponse(status: number, statusText: string, body: unknown): MailboxError {
  if (isEnvelope(body)) {
    const { error, code, message, ...details } = body;
    return new MailboxError(code as ErrorCode, error ?? code, message, details);
  }
  return new MailboxError(
    'UNAVAILABLE',
    'Unexpected response',
    `The server answered ${status} ${statusText} without an error envelope; is the URL a mailbox server?`,
    { status },
  );
}

/** An event as GET /v1/audit/events serves it: positions and revisions as strings (exact beyond 2^53). */
interface EventJson {
  position: string;
  streamName: string;
  revision: string;
  eventId: string;
  type: StoredEvent['type'];
  data: StoredEvent['data'];
  metadata: StoredEvent['metadata'];
}

const fromJson = (event: EventJson): StoredEvent =>
  ({
    ...event,
    position: BigInt(event.position),
    revision: BigInt(event.revision),
  }) as StoredEvent;

/** The task commands name their task in the path; a missing or non-string id is left to the server to refuse. */
function splitTaskId(input: unknown): { taskId: string; body: Record<string, unknown> } {
  const { taskId, ...body } = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  return { taskId: typeof taskId === 'string' && taskId !== '' ? taskId : '-', body };
}

/**
 * Where a caller's URL comes from, named when it is refused or the server cannot be reached: the client commands' --url
 * or MAILBOX_URL; `mailbox audit` reads --url only (told to set MAILBOX_URL, an auditor changed nothing).
 */
export interface UrlSource {
  /** The option and variable that set it, as a refusal names them. */
  names: string;
  /** What to do when the server cannot be reached. */
  unreachable: string;
}

const CLIENT_URL: UrlSource = { names: '--url or MAILBOX_URL', unreachable: 'Set --url or MAILBOX_URL' };
export const AUDIT_URL: UrlSource = { names: '--url', unreachable: 'Check --url' };

function checkedBaseUrl(baseUrl: string, from: UrlSource): string {
  let url: URL | null = null;
  try {
    url = new URL(baseUrl);
  } catch {
    // not a URL at all: refused below
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:')) return withoutApiPath(baseUrl, url, from);
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Invalid mailbox URL',
    `The mailbox URL '${baseUrl}' is not an http:// or https:// URL; give the server's address, e.g. http://127.0.0.1:7420 ` +
      `(${from.names}).`,
    { field: 'url' },
  );
}

/**
 * The client adds /v1/... itself, so a URL naming the API's path (http://host:7420/v1, copied from a curl line) was
 * answered 'no route GET /v1/v1/messages' at the first request. Any path with a v1 segment is refused at once; another
 * path (a reverse proxy's prefix, http://host/mailbox) is kept, as the server may be mounted there.
 */
function withoutApiPath(baseUrl: string, url: URL, from: UrlSource): string {
  const segments = url.pathname.split('/');
  if (!segments.includes('v1')) return baseUrl;
  const root = url.origin + segments.slice(0, segments.indexOf('v1')).join('/');
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Invalid mailbox URL',
    `The mailbox URL '${baseUrl}' names an API path (${url.pathname}); give the server's root, e.g. ` +
      `${root} (${from.names}): the client adds /v1/... itself.`,
    { field: 'url' },
  );
}

export class MailboxHttpClient implements AgentApi {
  private readonly baseUrl: string;

  /**
   * Refuses a base URL that is not http(s), or that names the API's path, at once, rather than at the first request as
   * an unreachable server or a missing route.
   */
  /** `urlFrom`: where the caller's URL comes from (UrlSource). */
  constructor(
    baseUrl: string,
    private readonly token: string | undefined,
    private readonly urlFrom: UrlSource = CLIENT_URL,
  ) {
    this.baseUrl = checkedBaseUrl(baseUrl, urlFrom).replace(/\/+$/, '');
  }

  /** One page of the ordered log (GET /v1/audit/events, at most 1000 events; auditor or admin token). */
  async auditEvents(after: bigint | null, limit: number): Promise<StoredEvent[]> {
    let page: { events: EventJson[] };
    try {
      page = await this.request<{ events: EventJson[] }>('GET', '/v1/audit/events', {
        query: { after: after?.toString(), limit: Math.min(limit, 1000) },
      });
    } catch (error) {
      // The server refuses a page from past its head (reading on from there would skip events); to this reader of
      // pages, as to one of the store, that is no event after `after` (its callers say what that means).
      if (isMailboxError(error) && error.code === 'NOT_FOUND' && error.envelope.field === 'after') return [];
      throw error;
    }
    return page.events.map(fromJson);
  }

  /**
   * The log head as the server's /readyz tells it (eventStore.head), for an auditor's progress and its
   * "past the head" answers; undefined when it cannot be told (an older server, an event store that did not answer,
   * the server unreachable: the page reads that follow say why). /readyz answers 503 with the same body while the node
   * is not ready, and the head is still the log's.
   */
  async logHead(): Promise<bigint | null | undefined> {
    let body: { eventStore?: { ok?: boolean; head?: unknown } } | null;
    try {
      body = (await (await this.fetch('GET', '/readyz', {})).json()) as typeof body;
    } catch {
      return undefined;
    }
    const eventStore = body?.eventStore;
    if (eventStore?.ok !== true) return undefined;
    if (eventStore.head === null) return null;
    return typeof eventStore.head === 'string' && /^[0-9]+$/.test(eventStore.head) ? BigInt(eventStore.head) : undefined;
  }

  /**
   * One JSON-RPC message, as read (any text), to POST /mcp for the server to answer as its own MCP endpoint answers it:
   * `mailbox mcp` has the server refuse, and so record, what it refused itself: as a refusal report (the header), which
   * the server checks and never runs. The answer's status.
   */
  async postMcp(text: string, signal?: AbortSignal): Promise<number> {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mailbox-refusal-report': '1', // REFUSAL_REPORT_HEADER (adapters/mcp/mcpRoutes.ts: the adapters do not import each other)
    };
    const response = await this.fetch('POST', '/mcp', { headers, signal, text });
    await response.arrayBuffer(); // read to its end: the connection is free again
    return response.status;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.answer<T>(method, path, options)).body;
  }

  /** The answer's body, with its headers (a send's Idempotent-Replayed). */
  private async answer<T>(method: string, path: string, options: RequestOptions): Promise<{ body: T; headers: Headers }> {
    const response = await this.fetch(method, path, options);
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: reported below if the status is an error
    }
    if (!response.ok) throw errorFromResponse(response.status, response.statusText, body);
    return { body: body as T, headers: response.headers };
  }

  registerAgent(identity: string, role: 'agent' | 'auditor' = 'agent'): Promise<Registration> {
    return this.request('POST', '/v1/agents', { body: { identity, role } });
  }
  retireAgent(identity: string): Promise<{
    identity: string;
    retiredAt: string;
    /** False: already retired, nothing changed (absent from a server before it said so). */
    changed?: boolean;
    releasedTasks: string[];
    canceledTasks: string[];
    warnings?: Array<{ code: string; message: string }>;
  }> {
    return this.request('DELETE', `/v1/agents/${encodeURIComponent(identity)}`);
  }
  rotateToken(identity: string): Promise<{
    identity: string;
    token: string;
    rotatedAt: string;
    warnings?: Array<{ code: string; message: string }>;
  }> {
    return this.request('POST', `/v1/agents/${encodeURIComponent(identity)}/token`);
  }
  listAgents(): Promise<{ agents: AgentView[] }> {
    return this.request('GET', '/v1/agents');
  }
  async send(input: unknown, idempotencyKey?: string): Promise<SendResult> {
    return (await this.sendOutcome(input, idempotencyKey)).result;
  }
  /** send, also saying whether the server replayed a send made already with this key (its Idempotent-Replayed header). */
  async sendOutcome(input: unknown, idempotencyKey?: string): Promise<SendOutcome> {
    // A key a header cannot carry as typed (past ASCII, 'déploiement-✓'; a control character) goes in the body's
    // idempotencyKey, which JSON carries exactly: as a header fetch refused it (and it was reported as an unreachable
    // server), or sent é as one Latin-1 byte, another key than the same key sent by curl.
    const options: RequestOptions =
      idempotencyKey !== undefined && !HEADER_SAFE.test(idempotencyKey) && isPlainObject(input)
        ? { body: { ...input, idempotencyKey } }
        : {
            body: input,
            // An empty key is sent as given, for the server to refuse: dropped, the send would go out without the key
            // its retry relies on (`--idempotency-key "$KEY"` with KEY unset).
            headers: idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {},
          };
    const { body, headers } = await this.answer<SendResult>('POST', '/v1/messages', options);
    return { result: body, replayed: headers.get(IDEMPOTENT_REPLAYED_HEADER) === 'true' };
  }
  listMessages(query: unknown = {}): Promise<MessagePage> {
    return this.request('GET', '/v1/messages', { query: query as Record<string, unknown> });
  }
  getMessage(messageId: string): Promise<MessageDetail> {
    return this.request('GET', `/v1/messages/${encodeURIComponent(messageId)}`);
  }
  /** {messageId, after?, limit?} */
  getDelivery(input: unknown): Promise<DeliveryLedger> {
    const { messageId, ...query } = (input ?? {}) as { messageId?: unknown } & Record<string, unknown>;
    return this.request('GET', `/v1/messages/${encodeURIComponent(String(messageId ?? ''))}/delivery`, { query });
  }
  markRead(input: unknown): Promise<ReadResult | BulkReadResult | ReadAllResult> {
    return this.request('POST', '/v1/messages/read', { body: input });
  }
  archive(messageId: string): Promise<ArchiveResult> {
    return this.request('POST', `/v1/messages/${encodeURIComponent(messageId)}/archive`);
  }
  unarchive(messageId: string): Promise<UnarchiveResult> {
    return this.request('POST', `/v1/messages/${encodeURIComponent(messageId)}/unarchive`);
  }
  unreadCount(): Promise<InboxCount> {
    return this.request('GET', '/v1/inbox/count');
  }
  /** POST /v1/tasks/{taskId}/claim: the task id goes in the path, the rest ({leaseSeconds}) in the body. */
  claimTask(input: unknown): Promise<TaskResult> {
    const { taskId, body } = splitTaskId(input);
    return this.request('POST', `/v1/tasks/${encodeURIComponent(taskId)}/claim`, { body });
  }
  updateTask(input: unknown): Promise<TaskResult> {
    const { taskId, body } = splitTaskId(input);
    return this.request('POST', `/v1/tasks/${encodeURIComponent(taskId)}/transition`, { body });
  }
  listTasks(query: unknown = {}): Promise<TaskPage> {
    return this.request('GET', '/v1/tasks', { query: query as Record<string, unknown> });
  }
  getTask(taskId: string): Promise<A2aTask> {
    return this.request('GET', `/v1/tasks/${encodeURIComponent(taskId)}`);
  }
  heartbeats(): Promise<{ agents: HeartbeatAnswer[] }> {
    return this.request('GET', '/v1/heartbeat');
  }

  /** Where `watch` follows the wake stream (said to a person watching when it is lost and back). */
  get wakeStreamUrl(): string {
    return `${this.baseUrl}/v1/wake`;
  }

  /** Follows GET /v1/wake until the server ends the stream or `signal` aborts. */
  /** The wake stream's events; a stream gone silent (streamSilence.ts) ends with UNAVAILABLE saying so. */
  async *watch(signal?: AbortSignal): AsyncGenerator<ClientWakeEvent> {
    const silence = new StreamSilence(signal, 'wake stream');
    try {
      const response = await this.fetch('GET', '/v1/wake', {
        signal: silence.signal,
        headers: { accept: 'text/event-stream' },
      });
      if (!response.ok || !response.body) {
        const text = await response.text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        throw errorFromResponse(response.status, response.statusText, body);
      }
      silence.answered(response.headers.get(HEARTBEAT_HEADER));
      for await (const event of readSse(response.body, () => silence.heard())) {
        yield { event: event.event, data: JSON.parse(event.data) } as ClientWakeEvent;
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (silence.timedOut) throw silence.error();
      throw error;
    } finally {
      silence.dispose();
    }
  }

  private async fetch(method: string, path: string, options: RequestOptions & { text?: string }): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.token) headers.authorization = `Bearer ${checkedToken(this.token)}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const url = `${this.baseUrl}${path}${encodeQuery(options.query)}`;
    try {
      return await fetch(url, {
        method,
        headers,
        signal: options.signal,
        body: options.text ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      // https:// to a server that answers in plain HTTP (mailbox serve does, unless a TLS proxy is in front): it was
      // reached, and "is `mailbox serve` running?" sent the user to look for a server that was running.
      const plain = this.baseUrl.startsWith('https:') && why === 'ERR_SSL_WRONG_VERSION_NUMBER';
      // fetch never tries a port of the Fetch standard's block list: "is `mailbox serve` running?" sent the user to look
      // for a server that may well be running there, and that no fetch client can reach.
      const blocked = why === 'bad port' ? blockedPortOf(url) : null;
      throw new MailboxError(
        'UNAVAILABLE',
        'Mailbox unreachable',
        `Cannot reach the mailbox at ${this.baseUrl} (${why}); ` +
          (plain
            ? `something answered there in plain HTTP, not TLS (mailbox serve speaks http://): give ${this.baseUrl.replace(/^https:/, 'http:')}. ${this.urlFrom.unreachable}.`
            : blocked !== null
              ? `port ${blocked} is ${FETCH_BLOCKED_PORT_REASON}, so nothing was sent: serve the mailbox on another ` +
                `port (MAILBOX_PORT). ${this.urlFrom.unreachable}.`
              : `is \`mailbox serve\` running? ${this.urlFrom.unreachable}.`),
        { url: this.baseUrl },
      );
    }
  }
}
