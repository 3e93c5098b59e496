/**
 * Times of earlier days in the console, in a real browser (Debian's chromium driven by playwright-core, as console.e2e;
 * skipped, saying so, only when it is absent). The agents table, the message story and its ledger showed the clock
 * time alone, so a message sent three days ago read as sent today at that time. Now a time on another day carries its
 * date (as the ledger's reply due already did); today's still read as the time alone.
 */
import type { Page } from 'playwright-core';
import { useConsoleBrowser } from '../support/chromium';

/** The server's clock: everything in this file is written three days ago. */
const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000);
const consoleTest = useConsoleBrowser('consoleOlderDays.e2e', {}, { clock: { now: () => threeDaysAgo } });
const { maybe } = consoleTest;

/** `iso` as the page writes a time on another day: its date, then its clock time. */
const onThePage = (page: Page, iso: string): Promise<string> =>
  page.evaluate(
    `[new Intl.DateTimeFormat([], { year: 'numeric', month: '2-digit', day: '2-digit' }), new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false })].map((f) => f.format(new Date(${JSON.stringify(iso)}))).join(' ')`,
  );

maybe(
  'a message of three days ago reads with its date in the agents table, its story and its ledger',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@a', '@b']);
    const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 'old', body: 'x' } });
    await server.call('POST', `/v1/messages/${sent.body.messageId}/read`, { token: t['@b'] });
    const at = threeDaysAgo.toISOString();

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    const shown = await onThePage(page, at);
    expect(shown).toMatch(/\d.*\d\d:\d\d:\d\d$/);
    const go = (name: string) =>
      page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name, exact: true }).click();

    await go('Agents');
    const row = page.getByTestId('agents').locator('tbody tr').first();
    await row.getByRole('cell', { name: '@a', exact: true }).waitFor();
    expect((await row.innerText()).split('\t')[4]).toBe(shown);

    await go('Message story');
    await page.getByLabel('Message id').fill(sent.body.messageId);
    await page.getByRole('button', { name: 'Show story' }).click();
    await page.getByTestId('story').getByText(`${shown} by @a to @b`).waitFor();
    const [recipient] = await page.getByTestId('recipients').locator('tbody tr').allInnerTexts();
    expect(recipient).toMatch(new RegExp(`^@b\\t${shown} \\(#\\d+\\)\\t${shown} \\(#\\d+\\)\\t–$`));
    await page.getByTestId('ledger-summary').waitFor();
    const [ledgerRow] = await page.getByTestId('ledger-rows').locator('tbody tr').allInnerTexts();
    expect(ledgerRow.split('\t')[5]).toBe(shown); // Read
  },
  60_000,
);
