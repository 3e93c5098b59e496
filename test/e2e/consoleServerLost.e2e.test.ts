/**
 * The console while its server is stopped, then back, in a real browser (Debian's chromium driven by playwright-core,
 * as console.e2e; skipped, saying so, only when it is absent). Each panel said only "Failed to fetch", and under it
 * Agents "no agents", Rejections "Newest 0 of the last … kept", Charts "0 samples", and Health kept its last answer
 * ("ready", every check OK) as if it were current. Now a panel that could not load says so and counts nothing; one that
 * could not refresh says that what it shows is the last answer, from when, not current; every failure says the server
 * did not answer; and all of it clears once the server is back.
 */
import type { Page } from 'playwright-core';
import { buildApiServer } from '../../src/server';
import type { HttpServer } from '../../src/adapters/http/httpServer';
import { silentLogger } from '../support/fixtures';
import { useConsoleBrowser } from '../support/chromium';
import { waitFor } from '../support/waitFor';

const consoleTest = useConsoleBrowser('consoleServerLost.e2e');
const { maybe } = consoleTest;

let again: HttpServer | undefined;
consoleTest.closing(() => again?.close());

const panel = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name, exact: true }).click();

const text = async (page: Page) => (await page.locator('main').innerText()).replace(/\s+/g, ' ');

maybe(
  'with the server stopped no panel shows a count or its last answer as current; all recover when it is back',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@a', '@b', '@c']);
    await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 's', body: 'x' } });
    const port = Number(new URL(server.url).port);

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();
    await panel(page, 'Health');
    await page.getByTestId('health').getByText('ready', { exact: true }).waitFor();

    // Stopped as by a crash: the listener closed and every open connection cut (the live flow's stream with them).
    const closed = server.http.close();
    await waitFor(() => !server.http.app.server.listening, { what: 'the listener closed' });
    server.http.app.server.closeAllConnections();
    await closed;
    // Health polls every 5 s: its next read gets no answer, and the last one is no longer said as the status.
    const problem = page.getByTestId('load-problem');
    await problem.getByText('Could not refresh').waitFor({ timeout: 10_000 });
    expect(await problem.innerText()).toMatch(
      /^Could not refresh the server's readiness \(\/readyz\): no answer from the server at 127\.0\.0\.1:\d+ \(stopped, restarting or unreachable: .*\)\. Shown below: the last answer, from \d\d:\d\d:\d\d \((now|\d+ s ago)\), not current; retrying\.$/,
    );
    expect(await page.getByTestId('health').innerText()).toMatch(
      /Status\s+unknown \(the last answer, from \d\d:\d\d:\d\d \((now|\d+ s ago)\), said ready\)/,
    );

    // Opened while the server is away: nothing loaded, nothing counted.
    await panel(page, 'Agents');
    await problem.getByText('Could not load the agents: no answer from the server').waitFor();
    expect(await page.getByTestId('agents-count').innerText()).toBe('agents not loaded');
    await panel(page, 'Rejections');
    await problem.getByText('Could not load the rejections: no answer from the server').waitFor();
    expect(await text(page)).not.toMatch(/Newest|No refused command/);
    await panel(page, 'Charts');
    await problem.getByText("Could not load the charts' samples: no answer from the server").waitFor();
    expect(await text(page)).not.toContain('samples, one every');
    await panel(page, 'Live flow');
    await page.getByTestId('flow-status').getByText('Stream: retrying (no answer from the server').waitFor();

    // Back on the same port: every panel reads again and says nothing of the outage.
    again = buildApiServer(server.mailbox, silentLogger);
    await again.listen('127.0.0.1', port);
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor({ timeout: 10_000 });
    await panel(page, 'Agents');
    await page.getByTestId('agents-count').getByText("1–3 of 3 agents · page 1 of 1 (wake streams: this node's)").waitFor();
    await panel(page, 'Health');
    await page.getByTestId('health').getByText('ready', { exact: true }).waitFor();
    expect(await problem.count()).toBe(0);
  },
  90_000,
);
