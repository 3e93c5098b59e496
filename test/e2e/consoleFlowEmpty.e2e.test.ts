/**
 * The live flow before anything is written, in a real browser (Debian's chromium driven by playwright-core, as
 * console.e2e; skipped, saying so, only when it is absent). It showed an empty table under "0 received" on a log with
 * events in it, which reads as an empty mailbox: the flow shows only what is written after it opens. Now it says so,
 * with the position it opened at and where the earlier events are; the note goes once an entry comes, and a Clear does
 * not bring it back.
 */
import { chromium, type Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/httpServer';
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from '../support/chromium';

const maybe = haveChromium('consoleFlowEmpty.e2e') ? test : test.skip;

let server: TestServer;
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

maybe(
  'an empty flow says it shows events from the position it opened at, not that the log is empty',
  async () => {
    server = await startTestServer();
    const t = await server.register(['@ana', '@ben']);
    const head = (await server.call('GET', '/readyz')).body.eventStore.head as string;
    expect(Number(head)).toBeGreaterThan(0);

    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Admin or auditor token').fill(server.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const empty = page.getByTestId('flow-empty');
    await empty.waitFor();
    expect(await empty.innerText()).toBe(
      `No event written since this flow opened at log position ${head}: it shows events as they are written. Earlier ones: a message's story (Message story), or GET /v1/audit/events.`,
    );

    await page.getByLabel('Agent', { exact: true }).fill('@ana');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await empty.getByText(`No event matching the filter written since this flow opened at log position ${head}`).waitFor();

    await server.call('POST', '/v1/messages', { token: t['@ben'], body: { to: '@ana', subject: 'for ana', body: 'x' } });
    await page.getByTestId('flow').getByText('“for ana”').waitFor();
    expect(await empty.count()).toBe(0);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByTestId('flow-status').getByText('Stream: live · 0 received').waitFor();
    expect(await empty.count()).toBe(0);
  },
  60_000,
);
