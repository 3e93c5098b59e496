/**
 * `mailbox task claim` of a task another agent holds (TASK_ALREADY_CLAIMED) told a CLI user that should it come back
 * "you are woken (a wake/task on GET /v1/wake: event TaskReleased or TaskLeaseExpired)": a route the CLI user never
 * calls. The CLI now names what it shows: `mailbox watch` prints a "task:" line. HTTP and --json keep the server's
 * words. Nothing is written by the refusal.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { ensureBuilt, runCli } from '../support/builtCli';

let server: TestServer;
let t: Record<string, string>;
let taskId: string;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  t = await server.register(['@alice', '@bob', '@carol']);
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@alice'],
    body: { to: ['@bob', '@carol'], subject: 'port it', body: 'module x', task: { state: 'Submitted' } },
  });
  taskId = sent.body.messageId;
  expect((await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@bob'] })).status).toBe(200);
}, 120_000); // a stale dist is built first

test('the CLI names `mailbox watch`, not GET /v1/wake; exit code 1, nothing written', async () => {
  const before = await server.eventCount();
  const run = await runCli(['task', 'claim', taskId], { MAILBOX_URL: server.url, MAILBOX_TOKEN: t['@carol'] });
  expect(await server.eventCount()).toBe(before);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(
    'Should it come back, you are woken (`mailbox watch` prints a "task:" line: TaskReleased or TaskLeaseExpired): ' +
      'wait for that rather than claiming again. (TASK_ALREADY_CLAIMED)',
  );
  expect(run.stderr).not.toContain('/v1/wake');
});

test('over HTTP the refusal keeps naming the wake stream', async () => {
  const refused = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@carol'] });
  expect(refused.status).toBe(409);
  expect(refused.body.message).toContain('(a wake/task on GET /v1/wake: event TaskReleased or TaskLeaseExpired)');
});
