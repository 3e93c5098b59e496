/**
 * A send that reuses an idempotency key for another message is refused (IDEMPOTENCY_KEY_REUSED). Its message named
 * the key as HTTP's header, "Idempotency-Key 'k1' was already used ...", to an MCP agent that sent `idempotencyKey`
 * and a CLI user who gave `--idempotency-key`, neither of which has that header. It now says "The idempotency key
 * 'k1' ...", true on every surface. Nothing is written by the refusal.
 */
import { mcpTestServer } from '../support/mcpSdkClients';
import { ensureBuilt, runCli } from '../support/builtCli';

const mcp = mcpTestServer('idempotency-key-reused-words', ['@alice', '@bob', '@carol']);

beforeAll(() => ensureBuilt(), 120_000);

const SAID = (key: string, changed: string) =>
  `The idempotency key '${key}' was already used for a different message (this request's ${changed} from that ` +
  "message's); use a new key for a new message, or send the first request unchanged to get its result again.";

async function refusedWithoutEvents<T>(call: () => Promise<T>): Promise<T> {
  const before = await mcp.server.eventCount();
  const answer = await call();
  expect(await mcp.server.eventCount()).toBe(before);
  return answer;
}

test.each(['http', 'stdio'] as const)('MCP over %s: add_message reusing idempotencyKey names no header', async (via) => {
  const client = via === 'http' ? await mcp.clients.http(mcp.t['@alice']) : await mcp.clients.stdio(mcp.t['@alice']);
  const key = `standup-${via}`;
  const first: any = await client.callTool({
    name: 'add_message',
    arguments: { to: ['@bob', '@carol'], subject: 'standup', body: '10:00', idempotencyKey: key },
  });
  expect(first.isError).toBeFalsy();
  const reused: any = await refusedWithoutEvents(() =>
    client.callTool({
      name: 'add_message',
      arguments: { to: ['@bob', '@carol'], subject: 'standup moved', body: '10:00', idempotencyKey: key },
    }),
  );
  expect(reused.isError).toBe(true);
  expect(reused.structuredContent).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', idempotencyKey: key });
  expect(reused.structuredContent.message).toBe(SAID(key, 'subject differs'));
});

test('the CLI: mailbox send --idempotency-key reused names no header, exit code 1', async () => {
  const env = { MAILBOX_URL: mcp.server.url, MAILBOX_TOKEN: mcp.t['@bob'] };
  const first = await runCli(['send', '@carol', 'review', 'the diff', '--idempotency-key', 'review-1'], env);
  expect(first.code).toBe(0);
  const reused = await refusedWithoutEvents(() =>
    runCli(['send', '@carol', 'review', 'another diff', '--idempotency-key', 'review-1'], env),
  );
  expect(reused.code).toBe(1);
  expect(reused.stderr).toBe(`error: ${SAID('review-1', 'body differs')} (IDEMPOTENCY_KEY_REUSED)\n`);
});
