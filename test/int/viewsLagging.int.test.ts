/**
 * Honest acknowledgements: when the views do not catch up within
 * MAILBOX_AWAIT_PROJECTION_MS, a command still answers (its events are durable)
 * and says so with a VIEWS_LAGGING warning; /metrics counts it and /readyz is
 * degraded until the views reach it. Memory views, applies held by a wrapper.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { buildProgram } from '../../src/cli/main';
import { registrationEvent } from '../support/fixtures';

type Json = Record<string, unknown>;
import { failApplies, holdApplies } from '../support/heldApplies';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

const AWAIT_MS = 150;

describe('VIEWS_LAGGING (memory views held)', () => {
  let server: TestServer;
  let tokens: Record<string, string>;

  beforeEach(async () => {
    server = await startTestServer({ awaitProjectionMs: AWAIT_MS });
    tokens = await server.register(['@ana', '@bo', '@cy']);
  });
  afterEach(async () => server.close());

  const lagging = (body: { warnings?: Array<{ code: string; position: string }> }) =>
    (body.warnings ?? []).filter((warning) => warning.code === 'VIEWS_LAGGING');

  it('a send answers 201 with the warning within the wait, readyz is degraded, and both end once the views catch up', async () => {
    const { call } = server;
    const before = await call('POST', '/v1/messages', {
      token: tokens['@ana'],
      body: { to: '@bo', subject: 'first', body: 'x' },
    });
    expect(before.status).toBe(201);
    expect(before.body.warnings).toBeUndefined();
    expect((await call('GET', '/readyz')).body.status).toBe('ready');

    const held = holdApplies(server.mailbox.projections);
    const started = Date.now();
    const sent = await call('POST', '/v1/messages', { token: tokens['@ana'], body: { to: '@bo', subject: 'held', body: 'x' } });
    expect(Date.now() - started).toBeLessThan(AWAIT_MS + 1500);
    expect(sent.status).toBe(201);
    const head = (await server.mailbox.eventStore.headPosition())!;
    expect(lagging(sent.body)).toEqual([
      expect.objectContaining({ position: head.toString(), message: expect.stringContaining('durable') }),
    ]);
    expect(held.waiting).toBeGreaterThan(0);

    const readiness = await call('GET', '/readyz');
    expect(readiness.status).toBe(200);
    expect(readiness.body.status).toBe('degraded');
    expect(readiness.body.projections.lagging.position).toBe(head.toString());
    expect((await call('GET', '/metrics')).body).toMatch(/mailbox_views_lagging_total\{command="send",surface="http"\} 1/);
    // Not visible yet: the warning told the truth.
    expect(
      (await call('GET', '/v1/messages', { token: tokens['@bo'] })).body.messages.map((m: { subject: string }) => m.subject),
    ).toEqual(['first']);

    held.release();
    expect(await server.mailbox.runner.waitFor(head, 5000)).toBe(true);
    expect((await call('GET', '/readyz')).body.status).toBe('ready');
    const inbox = await call('GET', '/v1/messages', { token: tokens['@bo'] });
    expect(inbox.body.messages.map((m: { subject: string }) => m.subject)).toEqual(['held', 'first']);
    expect((await call('GET', '/v1/messages', { token: tokens['@cy'] })).body.messages).toEqual([]);
    const after = await call('POST', '/v1/messages', { token: tokens['@ana'], body: { to: '@cy', subject: 'after', body: 'x' } });
    expect(after.status).toBe(201);
    expect(after.body.warnings).toBeUndefined();
  });

  it('while the projector waits to try again after a failure, readyz is degraded and says until when', async () => {
    const { call } = server;
    const runner = server.mailbox.runner;
    runner.useResubscribeBackoff({ initialDelayMs: 300, maxDelayMs: 300 });
    const failing = failApplies(server.mailbox.projections);
    // Appended to the log directly: no command waits for it, so no command's lagging makes readiness degraded.
    const { position: head } = await server.mailbox.eventStore.append('mailbox-agents', [registrationEvent('@dee')], 'any');
    await waitFor(() => runner.getStatus().retryingBy !== null, { what: 'the projector waiting to try again' });
    const waiting = await call('GET', '/readyz');
    expect(waiting.status).toBe(200); // the views store answers: reads are served, only late
    expect(waiting.body.status).toBe('degraded');
    expect(waiting.body.projections).toMatchObject({
      lagging: null,
      retryingBy: expect.any(String),
      lastError: 'the views store hiccuped',
    });

    failing.recover();
    expect(await runner.waitFor(head, 10_000)).toBe(true);
    const ready = await call('GET', '/readyz');
    expect(ready.body.status).toBe('ready');
    expect(ready.body.projections).toMatchObject({ retryingBy: null, lastError: null });
    const agents = await call('GET', '/v1/agents', { token: tokens['@ana'] });
    expect(agents.body.agents.map((a: { identity: string }) => a.identity)).toContain('@dee');
  });

  it('every command says it: read, bulk read, archive, register, retire; each answer as the OpenAPI document says', async () => {
    const { call } = server;
    const ids: string[] = [];
    for (const subject of ['one', 'two', 'three']) {
      ids.push(
        (await call('POST', '/v1/messages', { token: tokens['@ana'], body: { to: '@bo', subject, body: 'x' } })).body.messageId,
      );
    }
    const held = holdApplies(server.mailbox.projections);
    const documented = [
      '/v1/messages/{id}/read',
      '/v1/messages/read',
      '/v1/messages/{id}/archive',
      '/v1/agents',
      '/v1/agents/{identity}',
    ];
    const answers = [
      await call('POST', `/v1/messages/${ids[0]}/read`, { token: tokens['@bo'] }),
      await call('POST', '/v1/messages/read', { token: tokens['@bo'], body: { messageIds: [ids[1], ids[2]] } }),
      await call('POST', `/v1/messages/${ids[0]}/archive`, { token: tokens['@bo'] }),
      await call('POST', '/v1/agents', { token: server.adminToken, body: { identity: '@dee' } }),
      await call('DELETE', '/v1/agents/@cy', { token: server.adminToken }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 201, 200]);
    for (const answer of answers) expect(lagging(answer.body)).toHaveLength(1);
    // The documented schemas say additionalProperties: false; read and archive had no `warnings`, so a client generated
    // from the document refused exactly the answers that said the views lag.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const paths = (buildOpenApiDocument() as { paths: Record<string, Record<string, Json>> }).paths;
    answers.forEach((answer, i) => {
      const operation = paths[documented[i]][i === 4 ? 'delete' : 'post'];
      const success = Object.entries(operation.responses as Record<string, Json>).find(([status]) => status.startsWith('2'))!;
      const validate = ajv.compile(
        (success[1] as { content: Record<string, { schema: Json }> }).content['application/json'].schema,
      );
      expect([documented[i], validate(answer.body), ajv.errorsText(validate.errors)]).toEqual([documented[i], true, 'No errors']);
    });
    expect(answers[1].body.results.map((r: { status: string }) => r.status)).toEqual(['read', 'read']);
    const metrics = (await call('GET', '/metrics')).body as string;
    for (const command of ['mark_read', 'archive', 'register_agent', 'retire_agent']) {
      expect(metrics).toMatch(new RegExp(`mailbox_views_lagging_total\\{command="${command}",surface="http"\\} \\d`));
    }
    held.release();
    expect(await server.mailbox.runner.waitFor((await server.mailbox.eventStore.headPosition())!, 5000)).toBe(true);
    const agents = (await call('GET', '/v1/agents', { token: tokens['@ana'] })).body.agents;
    expect(agents.map((a: { identity: string; retired: boolean }) => `${a.identity}:${a.retired}`).sort()).toEqual([
      '@ana:false',
      '@bo:false',
      '@cy:true',
      '@dee:false',
    ]);
  });

  it('MCP answers the same (add_message, mark_read one and bulk, archive_message), counted under surface mcp', async () => {
    const client = new Client({ name: 'lagging', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${tokens['@ana']}` } },
      }),
    );
    try {
      await client.listTools(); // as an agent does: the SDK client then checks each structured answer against its tool's outputSchema
      const send = async () =>
        (await server.call('POST', '/v1/messages', { token: tokens['@bo'], body: { to: '@ana', subject: 's', body: 'x' } })).body;
      const [first, second] = [await send(), await send()];
      const held = holdApplies(server.mailbox.projections);
      const tool = async (name: string, args: Record<string, unknown>) =>
        JSON.parse(((await client.callTool({ name, arguments: args })) as { content: Array<{ text: string }> }).content[0].text);
      expect(lagging(await tool('add_message', { to: '@cy', subject: 'mcp', body: 'x' }))).toHaveLength(1);
      expect(lagging(await tool('mark_read', { messageId: first.messageId }))).toHaveLength(1);
      const bulk = await tool('mark_read', { messageIds: [second.messageId, second.messageId] });
      expect(bulk.warnings.map((warning: { code: string }) => warning.code)).toEqual(['DUPLICATE_MESSAGE_ID', 'VIEWS_LAGGING']);
      expect(lagging(await tool('archive_message', { messageId: first.messageId }))).toHaveLength(1);
      expect((await server.call('GET', '/metrics')).body).toMatch(
        /mailbox_views_lagging_total\{command="send",surface="mcp"\} 1/,
      );
      held.release();
    } finally {
      await client.close();
    }
  });

  it('the CLI says it too: read, archive, unarchive, task claim and move, agent add and token print the warning', async () => {
    const { call } = server;
    const send = async (to: string, extra: Json = {}) =>
      (await call('POST', '/v1/messages', { token: tokens['@ana'], body: { to, subject: 's', body: 'x', ...extra } })).body
        .messageId as string;
    const [first, second, third] = [await send('@bo'), await send('@bo'), await send('@bo')];
    const task = await send('AGENT:*', { task: {} });
    expect((await call('POST', `/v1/messages/${second}/archive`, { token: tokens['@bo'] })).status).toBe(200);
    let out: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const mailbox = async (token: string, ...args: string[]) => {
      out = [];
      process.exitCode = undefined;
      await buildProgram()
        .exitOverride()
        .parseAsync(['node', 'mailbox', ...args, '--url', server.url, '--token', token]);
      return { code: process.exitCode ?? 0, stdout: out.join('') };
    };
    const held = holdApplies(server.mailbox.projections);
    try {
      const warned = /^warning: Accepted and durable at log position \d+, but the views/m;
      const runs = [
        await mailbox(tokens['@bo'], 'read', first),
        await mailbox(tokens['@bo'], 'unarchive', second),
        await mailbox(tokens['@bo'], 'archive', first),
        await mailbox(tokens['@bo'], 'task', 'claim', task),
        await mailbox(tokens['@bo'], 'task', 'move', task, 'working'),
        await mailbox(server.adminToken, 'agent', 'add', '@dee'),
        await mailbox(server.adminToken, 'agent', 'token', '@dee'),
      ];
      // Before, each printed its success line alone: an operator read "Archived" and then a listing that still showed it.
      for (const run of runs) expect([run.code, run.stdout]).toEqual([0, expect.stringMatching(warned)]);
      const json = await mailbox(tokens['@bo'], 'read', third, '--json');
      expect(lagging(JSON.parse(json.stdout))).toHaveLength(1);
    } finally {
      held.release();
      jest.restoreAllMocks();
      process.exitCode = undefined;
    }
  });

  it('the library answers the same', async () => {
    const ana = await server.mailbox.as(tokens['@ana']);
    const held = holdApplies(server.mailbox.projections);
    const sent = await ana.send({ to: '@bo', subject: 'lib', body: 'x' });
    expect(lagging(sent as never)).toHaveLength(1);
    held.release();
  });
});
