/** Seed acceptance cases for recipients, over HTTP (DESIGN section 2). MCP: mcp.e2e.test.ts. */
import { VALID_RECIPIENT_SHAPES } from '../../src/commands/recipients';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let tokens: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  tokens = await server.register(['@sender', '@neo-gpt', '@other-client-agent-foo_42']);
});
afterAll(() => server.close());

const send = (to: string) =>
  server.call('POST', '/v1/messages', { token: tokens['@sender'], body: { to, subject: 's', body: 'b' } });

test.each(['@neo-gpt', '@other-client-agent-foo_42', 'AGENT:*'])('%s is accepted with 201', async (to) => {
  const { status, body } = await send(to);
  expect(status).toBe(201);
  expect(body).toMatchObject({ status: 'sent', to, messageId: expect.any(String), sentAt: expect.any(String) });
  const expected = to === 'AGENT:*' ? ['@neo-gpt', '@other-client-agent-foo_42'] : [to];
  expect([...body.recipients].sort()).toEqual(expected);
});

test('AGENT:gpt is rejected with INVALID_RECIPIENT_SHAPE listing both valid shapes, and writes nothing', async () => {
  const before = await server.eventCount();
  const { status, body } = await send('AGENT:gpt');
  expect(status).toBe(400);
  expect(body).toMatchObject({
    error: 'Invalid recipient shape',
    code: 'INVALID_RECIPIENT_SHAPE',
    to: 'AGENT:gpt',
    valid_shapes: VALID_RECIPIENT_SHAPES,
  });
  expect(body.message).toContain("'AGENT:gpt'");
  expect(await server.eventCount()).toBe(before);
});

test.each(['BROADCAST:*', 'neo-gpt'])('%s is rejected with 400 and writes nothing', async (to) => {
  const before = await server.eventCount();
  const { status, body } = await send(to);
  expect(status).toBe(400);
  expect(body.code).toBe('INVALID_RECIPIENT_SHAPE');
  expect(body.valid_shapes).toEqual(VALID_RECIPIENT_SHAPES);
  expect(await server.eventCount()).toBe(before);
});

test('no auto-correction: neo-gpt is not delivered to @neo-gpt', async () => {
  await send('neo-gpt');
  const inbox = await server.call('GET', '/v1/messages?status=all', { token: tokens['@neo-gpt'] });
  expect(inbox.status).toBe(200);
  expect(inbox.body.messages.every((m: { to: string }) => m.to !== 'neo-gpt')).toBe(true);
});
