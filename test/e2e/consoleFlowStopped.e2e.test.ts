/**
 * The live flow's status when its stream is refused for good, in a real browser (Debian's chromium driven by
 * playwright-core, as console.e2e; skipped, saying so, only when it is absent). A filter the server refuses (an agent
 * typed without its @) read "Stream: retrying (VALIDATION_FAILED: ...)" though the page never tried again: retrying
 * cannot change a refused filter. Now it reads "stopped", and a valid filter after it goes live.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleFlowStopped.e2e');
const { maybe } = consoleTest;

maybe(
  'a filter the server refuses stops the stream and says so, not "retrying"',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben']);
    const refused = await server.call('GET', '/v1/audit/stream?agent=ana', { token: server.adminToken });
    expect([refused.status, refused.body.code]).toEqual([400, 'VALIDATION_FAILED']);

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
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
