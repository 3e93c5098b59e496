/**
 * MCP SDK clients of a test server, as an agent's host connects them: over streamable HTTP (POST /mcp) and over stdio
 * (`mailbox mcp`, run in process on a pair of streams). Each is closed by closeAll, in afterAll.
 */
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { runStdioMcp } from '../../src/stdioMcp';
import { agentsServer, type AgentsServer } from './agentsServer';

/**
 * `mailbox mcp` on in-memory pipes, spoken to raw: `toServer` is its stdin; `lines`, each line it answered, parsed;
 * `arrived()` resolves when more have come.
 */
export async function stdioLines(url: string, token: string) {
  const [toServer, fromServer] = [new PassThrough(), new PassThrough()];
  const mcp = await runStdioMcp(url, token, { stdin: toServer, stdout: fromServer });
  const lines: any[] = [];
  const waiters: Array<() => void> = [];
  let buffered = '';
  fromServer.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      lines.push(JSON.parse(buffered.slice(0, end)));
      buffered = buffered.slice(end + 1);
    }
    waiters.splice(0).forEach((wake) => wake());
  });
  const arrived = () => new Promise<void>((wake) => waiters.push(wake));
  return { toServer, lines, arrived, close: () => mcp.close() };
}

export class McpSdkClients {
  private readonly closers: Array<() => Promise<void>> = [];

  /** `url`: the server's base URL (read at connect time: the server starts in beforeAll); `name`: the client's. */
  constructor(
    private readonly url: () => string,
    private readonly name: string,
  ) {}

  async http(token: string): Promise<Client> {
    const client = new Client({ name: this.name, version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${this.url()}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    this.closers.push(() => client.close());
    return client;
  }

  async stdio(token: string): Promise<Client> {
    const [toServer, fromServer] = [new PassThrough(), new PassThrough()];
    const mcp = await runStdioMcp(this.url(), token, { stdin: toServer, stdout: fromServer });
    const client = new Client({ name: `${this.name}-stdio`, version: '1.0.0' });
    await client.connect(new StdioServerTransport(fromServer, toServer));
    this.closers.push(async () => {
      await client.close();
      await mcp.close();
    });
    return client;
  }

  /**
   * `mailbox mcp` on in-memory pipes, spoken to raw and initialized: `write` sends one line (an object as its JSON),
   * `answerTo(id)` waits for the answer to `id` (null: an answer whose id could not be read), each taken once.
   */
  async rawStdio(token: string): Promise<{ write(line: object | string): void; answerTo(id: unknown): Promise<any> }> {
    const { toServer, lines, arrived, close } = await stdioLines(this.url(), token);
    this.closers.push(close);
    const write = (line: object | string) => toServer.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
    const answerTo = async (id: unknown) => {
      for (let at = lines.findIndex((line) => line.id === id); ; at = lines.findIndex((line) => line.id === id)) {
        if (at >= 0) return lines.splice(at, 1)[0];
        await arrived();
      }
    };
    const clientInfo = { name: `${this.name}-raw`, version: '1' };
    write({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo },
    });
    await answerTo('init');
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return { write, answerTo };
  }

  async closeAll(): Promise<void> {
    for (const close of this.closers.splice(0)) await close();
  }
}

/** A tool call's result as the SDK returns it. */
export type ToolResult = { isError?: boolean; content: Array<{ text: string }>; structuredContent?: any; _meta?: any };

/** A tool call as an agent's host makes it: whether it was refused (isError), and its structured answer. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; body: any }> {
  const result = (await client.callTool({ name, arguments: args })) as ToolResult;
  return { isError: result.isError === true, body: result.structuredContent };
}

export interface McpTestServer extends AgentsServer {
  readonly clients: McpSdkClients;
  /** Sends `message` over HTTP as `identity` (a registered one); the new message's id. */
  sendAs(identity: string, message: Record<string, unknown>): Promise<string>;
}

/**
 * The set-up of the MCP e2e suites: a test server with `identities` registered in beforeAll (three, so that receipts
 * show per recipient), and MCP SDK clients of it named `name`; clients and server closed in afterAll.
 */
export function mcpTestServer(name: string, identities: string[] = ['@a', '@b', '@c']): McpTestServer {
  const clients = new McpSdkClients(() => agents.server.url, name);
  const agents = agentsServer(identities, { beforeClose: () => clients.closeAll() });
  return {
    get server() {
      return agents.server;
    },
    get t() {
      return agents.t;
    },
    clients,
    post: (who, path, body, status) => agents.post(who, path, body, status),
    async sendAs(identity, message) {
      const sent = await agents.server.call('POST', '/v1/messages', { token: agents.t[identity], body: message });
      if (sent.status !== 201) throw new Error(`the set-up send failed: ${sent.status} ${JSON.stringify(sent.body)}`);
      return sent.body.messageId as string;
    },
  };
}
