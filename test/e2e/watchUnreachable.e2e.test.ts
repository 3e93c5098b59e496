/**
 * `mailbox watch` started while no server answers (not started yet, or a wrong port): it says once on stderr that the
 * stream is lost and that it reconnects, and Ctrl-C ends it. The reason is a sentence of its own, whose period read
 * "... Set --url or MAILBOX_URL.; reconnecting".
 */
import { ensureBuilt, startCli } from '../support/builtCli';
import { freePort } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

beforeAll(() => ensureBuilt(), 120_000);

test('a watch with no server to reach: one line saying so and that it reconnects, and Ctrl-C ends it', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  const watch = startCli(['watch', '--url', url], { MAILBOX_TOKEN: 'mbx_not_checked' });
  try {
    await waitFor(() => watch.stderr().includes('\n'), { timeoutMs: 30_000, what: "the watch's line on stderr" });
    watch.child.kill('SIGINT');
    const run = await watch.exited;
    expect(run.stderr).toBe(
      `lost the stream to ${url}/v1/wake: Cannot reach the mailbox at ${url} (ECONNREFUSED); is \`mailbox serve\` ` +
        'running? Set --url or MAILBOX_URL; reconnecting\n',
    );
    expect(run.stdout).toBe('');
    expect(run.code).toBe(0);
  } finally {
    if (watch.child.exitCode === null) watch.child.kill('SIGKILL');
  }
}, 60_000);
