/**
 * `mailbox mcp`'s composition: an MCP server on stdio whose tools proxy to a
 * mailbox server's HTTP API with the agent's token, so the answers and errors
 * are the server's own. The two adapters meet only here.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import { MailboxHttpClient } from './adapters/http/client/mailboxHttpClient';
import { McpServerFactory } from './adapters/mcp/mcpServer';
import type { AgentApi } from './application/agentApi';
import { isMailboxError, MailboxError } from './errors';

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
  return token
    ? null
    : new MailboxError('UNAUTHENTICATED', 'Unauthenticated', NO_TOKEN_MESSAGE, { hint: 'MAILBOX_TOKEN=mbx_...' });
}

/**
 * Refused, the server still speaks MCP (a client whose server exits before `initialize` only says
 * "disconnected", and its user never sees our stderr): it lists the tools and answers every call with the
 * envelope that says what to fix in the client's configuration.
 */
export function refusingAgentApi(refusal: MailboxError): AgentApi {
  const refuse = async (): Promise<never> => {
    throw refusal;
  };
  return {
    send: refuse,
    listMessages: refuse,
    getMessage: refuse,
    getDelivery: refuse,
    markRead: refuse,
    archive: refuse,
    unarchive: refuse,
    listAgents: refuse,
    unreadCount: refuse,
    claimTask: refuse,
    updateTask: refuse,
    listTasks: refuse,
    getTask: refuse,
  };
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

/** Serves MCP on the given streams (stdin/stdout by default; tests pass in-memory pipes). Refused (stdioRefusal): every tool call says why. */
export async function runStdioMcp(url: string, token: string | undefined, streams: { stdin?: Readable; stdout?: Writable } = {}) {
  const factory = new McpServerFactory((error) => process.stderr.write(`mailbox mcp: tool failed: ${String(error)}\n`));
  const refusal = stdioRefusal(url, token);
  const server = factory.create(refusal ? refusingAgentApi(refusal) : new MailboxHttpClient(url, token));
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  await server.connect(transport);
  const dispatch = transport.onmessage; // set by connect: the server's own handling of each message read
  transport.onmessage = (message: JSONRPCMessage) => {
    const refusal = requestWithoutIdError(message);
    // The transport only serializes what it sends; its type has no null id, which JSON-RPC gives this answer.
    if (refusal) void transport.send(refusal as JSONRPCMessage).catch(() => undefined);
    else dispatch?.(message);
  };
  return server;
}
