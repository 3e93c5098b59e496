/**
 * `mailbox serve` said where it listens twice: fastify's own `Server listening at http://127.0.0.1:<port>` (component
 * http) and then the server's `mailbox listening on http://127.0.0.1:<port> (API docs at .../docs)`. An operator reads
 * the address once now, in the server's line (at debug too, where both showed as well).
 */
import { ensureBuilt, startCli, type StartedCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

let server: StartedCli | null = null;
beforeAll(() => ensureBuilt());
afterEach(() => server?.child.kill('SIGKILL'));

const messagesOf = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));

test.each(['info', 'debug'])('serve at log level %s says where it listens in one line', async (level) => {
  server = startCli(['serve'], {
    MAILBOX_DATA_DIR: tempDir('mailbox-listening-line-'),
    MAILBOX_PORT: '0',
    MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    MAILBOX_LOG_LEVEL: level,
  });
  const started = server;
  await waitFor(() => started.stdout().includes('mailbox listening on'), { timeoutMs: 30_000, what: 'the server listening' });
  const url = /mailbox listening on (http:\/\/\S+) /.exec(started.stdout())![1];
  const port = new URL(url).port;
  // Every line that names the port: the server's, once (fastify's line came before it, as it bound).
  expect(messagesOf(started.stdout()).filter((message) => message.includes(`:${port}`))).toEqual([
    `mailbox listening on ${url} (API docs at ${url}/docs)`,
  ]);
  expect(started.stderr()).toBe('');
  // Bound and answering.
  const refused = await fetch(`${url}/v1/agents`, { headers: { authorization: 'Bearer nobody-s-token' } });
  expect(refused.status).toBe(401);
});
