/**
 * `mailbox mcp`'s composition: an MCP server on stdio whose tools proxy to a
 * mailbox server's HTTP API with the agent's token, so the answers and errors
 * are the server's own. The two adapters meet only here.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Transform, type Readable, type Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { MailboxHttpClient } from './adapters/http/client/mailboxHttpClient';
import { McpServerFactory, refuseInvalidParams } from './adapters/mcp/mcpServer';
import { emptyBatch, invalidJsonRpc, jsonRpcError } from './adapters/mcp/jsonRpcRefusals';
import { refusingAgentApi } from './adapters/mcp/refusingAgentApi';
import { duplicateKeyError, pathOfDuplicateKey } from './commands/jsonDuplicateKeys';
import type { AgentApi } from './application/agentApi';
import { isMailboxError, MailboxError } from './errors';
import { LIMITS_UNREAD, type StatedLimits } from './application/servedLimits';

const NO_TOKEN_MESSAGE =
  'mailbox mcp has no agent token: set MAILBOX_TOKEN in the MCP client\'s "env" for this server ' +
  '(or pass --token); an admin gets one with `mailbox agent add @<identity>`.';

/**
 * What keeps this server from calling the mailbox at all: a URL that is not http(s) (`127.0.0.1:7420` without
 * its scheme is the usual one), or no token. Null when it can call it.
 */
export function stdioRefusal(url: string, token: string | undefined): MailboxError | null {
  try {
    new MailboxHttpClient(url, token); // refuses a URL that is not http(s), at once
  } catch (error) {
    if (isMailboxError(error)) return error;
    throw error;
  }
  if (token !== undefined && token.trim() !== '') return null;
  return new MailboxError(
    'UNAUTHENTICATED',
    'Unauthenticated',
    token === undefined ? NO_TOKEN_MESSAGE : emptyTokenMessage(token),
    {
      hint: 'MAILBOX_TOKEN=mbx_...',
    },
  );
}

/**
 * MAILBOX_TOKEN set but empty in an MCP client's "env" (`"MAILBOX_TOKEN": "${AGENT_TOKEN}"` with AGENT_TOKEN unset) was
 * told "has no agent token: set MAILBOX_TOKEN" while it was set, and a blank one (spaces) was sent to the server as a
 * token; said as every empty MAILBOX_* variable is (config.ts, emptyRefusal).
 */
const emptyTokenMessage = (token: string) =>
  `mailbox mcp's token (MAILBOX_TOKEN or --token) is ${token === '' ? 'set but empty (a ${VARIABLE} substituted while VARIABLE was unset?)' : 'blank (only spaces)'}: ` +
  'set MAILBOX_TOKEN in the MCP client\'s "env" for this server to the agent\'s token; an admin gets one with `mailbox agent add @<identity>`.';

/** How long `mailbox mcp` waits at start for the server to say whom its token is for. */
const START_CHECK_MS = 5000;

/** What GET /v1/whoami answers: the token's holder, and the server's limits (absent from an older server's answer). */
interface Whoami {
  identity: string;
  role: string;
  limits?: { maxBodyBytes?: unknown };
}

/** What `mailbox mcp` learned from its server at start: whoami's answer; or why it did not ask, or was not answered. */
export type StartCheck = { whoami: Whoami } | { refusal: MailboxError } | { failure: unknown };

/** Asks the server, once, at start (GET /v1/whoami): whom it takes the token for, and its limits. */
export async function checkServer(url: string, token: string | undefined): Promise<StartCheck> {
  const refusal = stdioRefusal(url, token);
  if (refusal) return { refusal };
  try {
    const signal = AbortSignal.timeout(START_CHECK_MS);
    return { whoami: await new MailboxHttpClient(url, token).request<Whoami>('GET', '/v1/whoami', { signal }) };
  } catch (error) {
    return { failure: error };
  }
}

/**
 * The limits its tools/list states: the server's own, as GET /v1/whoami gave them (the schemas POST /mcp serves state
 * the same); LIMITS_UNREAD when the server could not be asked, refused, or did not say (an older server): the defaults,
 * said to be, and that its own could not be read. It stated the default whatever its server's limit was.
 */
export function limitsOf(check: StartCheck): StatedLimits {
  const said = 'whoami' in check ? check.whoami.limits?.maxBodyBytes : undefined;
  return typeof said === 'number' && Number.isSafeInteger(said) && said > 0 ? { maxBodyBytes: said } : LIMITS_UNREAD;
}

/**
 * The line `mailbox mcp` starts with, on stderr (the MCP client's log: its user sees nothing else): whom the server
 * takes the token for, or why the tool calls will fail. It said "serving MCP on stdio for <url>" with a token the
 * server refused, or no server at the URL, and the first sign was a tool call's error. Never keeps it from serving: an
 * MCP client whose server exits before `initialize` only says "disconnected", and a server started later answers.
 */
export function startLine(url: string, check: StartCheck): string {
  if ('refusal' in check) return `${check.refusal.message} Serving MCP anyway: every tool call answers ${check.refusal.code}.`;
  if ('failure' in check) {
    const error = check.failure;
    if (!isMailboxError(error))
      return `serving MCP on stdio for ${url}, which did not answer within ${START_CHECK_MS} ms; tool calls may answer UNAVAILABLE.`;
    const until = error.code === 'UNAVAILABLE' ? 'until it answers' : 'until this is fixed';
    return `${error.message} Serving MCP anyway: tool calls answer ${error.code} ${until}.`;
  }
  const { identity, role } = check.whoami;
  if (role === 'agent') return `serving MCP on stdio for ${url} as ${identity}`;
  const holder = role === 'admin' ? 'the admin token' : `the token of ${role} ${identity}`;
  return (
    `serving MCP on stdio for ${url} with ${holder}, not an agent's: the tools send and read an agent's mail, so ` +
    "they answer FORBIDDEN; set MAILBOX_TOKEN to the agent's token (an admin gets one with `mailbox agent add @<identity>`)."
  );
}

/**
 * A request (any method but notifications/*) sent without an id parses as a JSON-RPC notification: the SDK
 * answers none and runs nothing, so a tools/call would be silently dropped. POST /mcp refuses it with 400
 * VALIDATION_FAILED; stdio has no status, so the answer is the JSON-RPC Invalid Request error (-32600) with a null id
 * (JSON-RPC 2.0: the id of a request whose id could not be read), and the method is never dispatched.
 */
export function requestWithoutIdError(message: JSONRPCMessage): object | null {
  if (!('method' in message) || 'id' in message || message.method.startsWith('notifications/')) return null;
  return {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message:
        `Invalid Request: '${message.method}' was sent without an id: a JSON-RPC message without an id is a notification, ` +
        'which gets no answer, so nothing was done. Give it an id (e.g. "id": 1); only notifications/* methods are sent without one.',
      data: { code: 'VALIDATION_FAILED', field: 'id', method: message.method },
    },
  };
}

const isJsonRpcMessage = (message: unknown) => JSONRPCMessageSchema.safeParse(message).success;

/**
 * The answer to one line of stdin that is no JSON-RPC message, or null for a line to pass on. The SDK's stdio transport
 * only reported such a line to its onerror and answered nothing: a client waited for an answer that never came.
 * JSON-RPC 2.0 answers each: not JSON (or a key named twice, which JSON.parse would settle by keeping the last) is a
 * Parse error (-32700), JSON that is no message an Invalid Request (-32600); a batch too, as this transport takes one
 * message per line (MCP dropped batches in 2025-06-18).
 */
export function lineRefusal(line: string): object | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const refusal = new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `Parse error: the line is not valid JSON (${(error as Error).message}); send one JSON-RPC message per line, ` +
        'e.g. {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}. Nothing was done.',
      { field: 'body' },
    );
    return jsonRpcError(-32700, refusal);
  }
  const repeated = pathOfDuplicateKey(line);
  if (repeated !== null) {
    const refusal = duplicateKeyError(repeated);
    return {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: `Parse error: ${refusal.message}`, data: refusal.envelope },
    };
  }
  const empty = emptyBatch(value, false);
  if (empty) return jsonRpcError(-32600, empty);
  if (Array.isArray(value))
    return jsonRpcError(
      -32600,
      new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        `Invalid Request: mailbox mcp takes one JSON-RPC message per line, not a batch (a JSON array of ${value.length}); ` +
          'send each message on a line of its own. Nothing in the batch was done.',
        { field: 'body', messages: value.length },
      ),
    );
  const invalid = invalidJsonRpc(value, isJsonRpcMessage);
  return invalid ? jsonRpcError(invalid.code, invalid.error, invalid.id) : null;
}

/** stdin, line by line: each line that is a JSON-RPC message passes on to the transport; any other is answered. */
function answeringLines(answer: (refusal: object, line: string) => void): Transform {
  let partial = '';
  const decoder = new StringDecoder('utf8'); // a character split across two chunks is decoded whole
  const lines = (text: string, push: (line: string) => void) => {
    partial += text;
    for (let end = partial.indexOf('\n'); end >= 0; end = partial.indexOf('\n')) {
      const line = partial.slice(0, end).replace(/\r$/, '');
      partial = partial.slice(end + 1);
      if (line.trim() === '') continue; // no message: nothing to answer
      const refusal = lineRefusal(line);
      if (refusal) answer(refusal, line);
      else push(`${line}\n`);
    }
  };
  return new Transform({
    decodeStrings: false,
    transform(chunk: Buffer | string, _encoding, done) {
      lines(typeof chunk === 'string' ? chunk : decoder.write(chunk), (line) => this.push(line));
      done();
    },
    flush(done) {
      lines(`${decoder.end()}\n`, (line) => this.push(line)); // a last line without its newline
      done();
    },
  });
}

/**
 * What `mailbox mcp` refuses itself (a line that is no JSON-RPC message, a request without an id, a tools/call's wrong
 * params, a tool that does not exist, arguments a tool refuses before calling the server) is sent on to the server's
 * POST /mcp with the agent's token, whose answer is discarded: the server refuses it with the same code, and records it in
 * its rejection log as every MCP refusal, with the agent its token names. This process keeps no log of its own. What the
 * server answered (a tool call it refused) it recorded already, and is not sent again; nor is a batch (one line, which
 * this transport refuses whole, and POST /mcp would run). The answer waits for the server, at most START_CHECK_MS; a
 * refusal the server could not be told of is said on stderr.
 */
function serverRecords(client: MailboxHttpClient, answeredByServer: WeakSet<object>) {
  const tell = async (text: string) => {
    try {
      await client.postMcp(text, AbortSignal.timeout(START_CHECK_MS));
    } catch (error) {
      process.stderr.write(`mailbox mcp: a refusal was answered, but the server could not record it: ${String(error)}\n`);
    }
  };
  return {
    line: async (line: string) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        value = undefined; // not JSON: the server refuses its text as it refuses it here
      }
      if (!(Array.isArray(value) && value.length > 0)) await tell(line);
    },
    refused: async (_command: string, error: MailboxError, message: unknown) => {
      if (!answeredByServer.has(error)) await tell(JSON.stringify(message));
    },
  };
}

/** `api`, whose every refusal is added to `answeredByServer`: the server answered it, and recorded it. */
function markingServerAnswers(api: AgentApi, answeredByServer: WeakSet<object>): AgentApi {
  return new Proxy(api, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return await value.apply(target, args);
        } catch (error) {
          if (error && typeof error === 'object') answeredByServer.add(error);
          throw error;
        }
      };
    },
  });
}

/**
 * Serves MCP on the given streams (stdin/stdout by default; tests pass in-memory pipes). Refused (stdioRefusal): every
 * tool call says why. Its tools/list states the limits the server gave at start (`check`, made here when not given),
 * so nothing is read until the server answered or the check gave up (START_CHECK_MS at most; stdin waits meanwhile).
 */
export async function runStdioMcp(
  url: string,
  token: string | undefined,
  streams: { stdin?: Readable; stdout?: Writable } = {},
  check: Promise<StartCheck> = checkServer(url, token),
) {
  const factory = new McpServerFactory(
    (error) => process.stderr.write(`mailbox mcp: tool failed: ${String(error)}\n`),
    limitsOf(await check),
  );
  const refusal = stdioRefusal(url, token);
  const client = refusal ? null : new MailboxHttpClient(url, token);
  const answeredByServer = new WeakSet<object>();
  // Refused (no token, no http(s) URL), there is no server to tell: nothing is recorded.
  const records = client ? serverRecords(client, answeredByServer) : { line: async () => {}, refused: () => {} };
  const started = await check;
  const server = factory.create(
    client ? markingServerAnswers(client, answeredByServer) : refusingAgentApi(refusal as MailboxError),
    records.refused,
    client && 'whoami' in started ? started.whoami : null,
  );
  const send = (answer: object) => void transport.send(answer as JSONRPCMessage).catch(() => undefined);
  // A refusal waits for the server to record it: what is read after it waits too, so that answers keep the order read.
  let ordered = Promise.resolve();
  const inOrder = (work: () => unknown) => {
    ordered = ordered.then(work).then(
      () => undefined,
      () => undefined,
    );
  };
  const answer = (refused: object, line: string) => inOrder(() => records.line(line).then(() => send(refused)));
  const transport = new StdioServerTransport((streams.stdin ?? process.stdin).pipe(answeringLines(answer)), streams.stdout);
  await server.connect(transport);
  refuseInvalidParams(transport, records.refused);
  const dispatch = transport.onmessage; // set by connect: the server's own handling of each message read
  transport.onmessage = (message: JSONRPCMessage) => {
    const refused = requestWithoutIdError(message);
    // The transport only serializes what it sends; its type has no null id, which JSON-RPC gives this answer.
    if (refused) inOrder(() => records.line(JSON.stringify(message)).then(() => send(refused)));
    else inOrder(() => dispatch?.(message)); // refuseInvalidParams' refusal: a promise, settled once answered
  };
  return server;
}
