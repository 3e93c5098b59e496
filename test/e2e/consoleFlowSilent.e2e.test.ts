/**
 * The live flow's stream going silent, in a real browser (Debian's chromium driven by playwright-core, as console.e2e;
 * skipped, saying so, only when it is absent). Between the page and the server, a TCP relay the test can freeze: its
 * open connections stay open and carry nothing, as a frozen server (SIGSTOP, a paused VM) or a path dropped without a
 * close leaves them. The page said "Stream: live" over such a stream for ever and showed nothing; the server names its
 * heartbeat interval (x-mailbox-heartbeat-ms) and the CLI's watch gives up after three of them. Now the flow does too:
 * it says the stream went silent, reconnects from its last position, and shows what was written meanwhile.
 */
import net from 'node:net';
import { useConsoleBrowser } from '../support/chromium';

const HEARTBEAT_MS = 400;
const consoleTest = useConsoleBrowser('consoleFlowSilent.e2e', { sseHeartbeatMs: HEARTBEAT_MS });
const { maybe } = consoleTest;

let relay: net.Server | undefined;
consoleTest.closing(() => relay?.close());

/** Forwards to `port`; freeze() stops carrying bytes on the connections open now (new ones are carried). */
async function startRelay(port: number): Promise<{ url: string; freeze(): void }> {
  const open = new Set<{ client: net.Socket; upstream: net.Socket }>();
  relay = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    const pair = { client, upstream };
    open.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => relay!.listen(0, '127.0.0.1', resolve));
  const { port: relayPort } = relay.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${relayPort}`,
    freeze() {
      for (const { client, upstream } of open) {
        upstream.unpipe(client);
        client.unpipe(upstream);
        upstream.pause();
        client.pause();
      }
      open.clear();
    },
  };
}

maybe(
  'a stream silent past three heartbeats is said to be lost and reopened from its last position',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cy']);
    const { url, freeze } = await startRelay(Number(new URL(server.url).port));

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken, url);
    const status = page.getByTestId('flow-status');
    const flow = page.getByTestId('flow');
    await status.getByText('Stream: live').waitFor();
    await server.call('POST', '/v1/messages', { token: t['@ben'], body: { to: '@ana', subject: 'before', body: 'x' } });
    await flow.getByText('“before”').waitFor();

    freeze(); // the open stream carries nothing from now on, and is not closed
    await server.call('POST', '/v1/messages', {
      token: t['@cy'],
      body: { to: ['@ana', '@ben'], subject: 'while silent', body: 'x' },
    });
    await status
      .getByText(
        `Stream: retrying (the stream went silent: no event and no heartbeat for ${3 * HEARTBEAT_MS} ms, and the server ` +
          `sends one every ${HEARTBEAT_MS} ms`,
      )
      .waitFor({ timeout: 20_000 });
    // Reopened through a fresh connection, after the last position it showed: what was written meanwhile comes, once.
    await status.getByText('Stream: live').waitFor({ timeout: 20_000 });
    await flow.getByText('“while silent”').waitFor();
    expect(await flow.getByText('“before”').count()).toBe(1);
  },
  90_000,
);
