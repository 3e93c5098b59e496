/**
 * MCP SDK clients of a test server, as an agent's host connects them: over streamable HTTP (POST /mcp) and over stdio
 * (`mailbox mcp`, run in process on a pair of streams). Each is closed by closeAll, in afterAll.
 */
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { runStdioMcp } from '../../src/stdioMcp';

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

  async closeAll(): Promise<void> {
    for (const close of this.closers.splice(0)) await close();
  }
}
