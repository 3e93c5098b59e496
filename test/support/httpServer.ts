/**
 * A real HTTP server on a free loopback port over a mailbox (memory store by
 * default), plus a small fetch helper that returns status, headers and JSON.
 */
import type { MailboxConfigInput } from '../../src/config';
import type { ContainerOverrides } from '../../src/compositionRoot';
import type { Mailbox } from '../../src/mailbox';
import type { HttpServer } from '../../src/adapters/http/httpServer';
import { buildApiServer } from '../../src/server';
import { ADMIN_TOKEN, allEvents, memoryMailbox, silentLogger } from './fixtures';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  /** A raw body sent as is (for malformed JSON tests; bytes for encoding tests). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Gives up after this long (a server that may be stopped or killed). */
  timeoutMs?: number;
}

/** One request to a mailbox at `baseUrl` (in process or a `mailbox serve` child), the JSON body parsed. */
export async function callUrl<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
  const response = await fetch(baseUrl + path, { method, headers, body, signal });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    headers: response.headers,
    body: (type.includes('json') && text ? JSON.parse(text) : text) as T,
  };
}

export interface TestServer {
  url: string;
  mailbox: Mailbox;
  http: HttpServer;
  adminToken: string;
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<HttpResult<T>>;
  /** Registers agents as the admin over HTTP; returns identity -> token. */
  register(identities: string[], role?: 'agent' | 'auditor'): Promise<Record<string, string>>;
  eventCount(): Promise<number>;
  close(): Promise<void>;
}

/** `overrides`: the mailbox's clock or ids (a test that moves time, e.g. past a task's lease), or the logger of both. */
export async function startTestServer(config: MailboxConfigInput = {}, overrides: ContainerOverrides = {}): Promise<TestServer> {
  // MAILBOX_TEST_EVENTSTORE=esdb-double: the same suites on EventStoreDB (adapter + real client, in-repo test double).
  // Imported only then: gRPC and the generated protobuf code cost every test file that starts a server ~0.2 s to load.
  const double =
    process.env.MAILBOX_TEST_EVENTSTORE === 'esdb-double' && config.eventStoreUrl === undefined
      ? await (await import('./esdbDouble/esdbDouble')).EsdbDouble.start()
      : null;
  const mailbox = await memoryMailbox(
    { rateLimitPerSecond: 0, ...(double ? { eventStoreUrl: double.url } : {}), ...config },
    overrides,
  );
  const http = buildApiServer(mailbox, overrides.logger ?? silentLogger);
  const url = await http.listen('127.0.0.1', 0);

  const call = <T>(method: string, path: string, options: CallOptions = {}) => callUrl<T>(url, method, path, options);

  return {
    url,
    mailbox,
    http,
    adminToken: ADMIN_TOKEN,
    call,
    async register(identities, role = 'agent') {
      const tokens: Record<string, string> = {};
      for (const identity of identities) {
        const { status, body } = await call<{ token: string }>('POST', '/v1/agents', {
          token: ADMIN_TOKEN,
          body: { identity, role },
        });
        if (status !== 201) throw new Error(`registering ${identity}: ${status} ${JSON.stringify(body)}`);
        tokens[identity] = body.token;
      }
      return tokens;
    },
    eventCount: async () => (await allEvents(mailbox)).length,
    async close() {
      await http.close();
      await mailbox.close();
      await double?.close();
    },
  };
}
