/**
 * The live flow's status when its stream is refused for good, in a real browser (Debian's chromium driven by
 * playwright-core, as console.e2e; skipped, saying so, only when it is absent). A filter the server refuses (an agent
 * typed without its @) read "Stream: retrying (VALIDATION_FAILED: ...)" though the page never tried again: retrying
 * cannot change a refused filter. Now it reads "stopped", and a valid filter after it goes live.
 */
import { chromium, type Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/httpServer';
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from '../support/chromium';

const maybe = haveChromium('consoleFlowStopped.e2e') ? test : test.skip;

let server: TestServer;
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

maybe(
  'a filter the server refuses stops the stream and says so, not "retrying"',
  async () => {
    server = await startTestServer();
    const t = await server.register(['@ana', '@ben']);
    const refused = await server.call('GET', '/v1/audit/stream?agent=ana', { token: server.adminToken });
    expect([refused.status, refused.body.code]).toEqual([400, 'VALIDATION_FAILED']);

    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Admin or auditor token').fill(server.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const status = page.getByTestId('flow-status');
    await status.getByText('Stream: live').waitFor();

    await page.getByLabel('Agent', { exact: true }).fill('ana');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await status.getByText("Stream: stopped (VALIDATION_FAILED: GET /v1/audit/stream: 'agent' must be an identity").waitFor();
    expect(await status.innerText()).not.toContain('retrying');

    await page.getByLabel('Agent', { exact: true }).fill('@ana');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await status.getByText('Stream: live').waitFor();
    await server.call('POST', '/v1/messages', { token: t['@ben'], body: { to: '@ana', subject: 'for ana', body: 'x' } });
    await page.getByTestId('flow').getByText('“for ana”').waitFor();
  },
  60_000,
);
