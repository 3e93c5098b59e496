/**
 * The Rejections panel's counts, in a real browser (Debian's chromium driven by playwright-core, as console.e2e; skipped,
 * saying so, only when it is absent). Above the table stood bare chips, "@a · INVALID_RECIPIENT_SHAPE: 2", with nothing
 * visible saying what the number counts or over what (the panel reads the newest 200 on record, not all time), and the
 * refused token's chip said "(unauthenticated)" where its rows say "(token refused)". Now a caption says what they count
 * and over which rows, and the chip names the caller as the rows do.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleRejectionCounts.e2e');
const { maybe } = consoleTest;

maybe(
  'the most frequent rejections say what they count, over which rows, naming callers as the rows do',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@a', '@b', '@c']);
    const before = await server.eventCount();
    const send = (token: string, to: string) =>
      server.call('POST', '/v1/messages', { token, body: { to, subject: 's', body: 'x' } });
    for (const [token, to] of [
      [t['@a'], 'b'],
      [t['@a'], 'c'],
      [t['@b'], 'AGENT:a'],
      ['not-a-token', '@a'],
    ]) {
      expect((await send(token, to)).status).toBeGreaterThanOrEqual(400);
    }
    expect(await server.eventCount()).toBe(before); // refused: nothing written

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Rejections', exact: true }).click();
    const rows = page.getByTestId('rejections').locator('tbody tr');
    await rows.nth(3).waitFor();
    expect((await rows.allInnerTexts()).map((row) => row.split('\t')[1])).toEqual(['(token refused)', '@b', '@a', '@a']);
    const panel = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
    expect(panel).toContain(
      'Refused commands among the newest 4 on record, by caller and code: ' +
        '@a · INVALID_RECIPIENT_SHAPE: 2 (token refused) · UNAUTHENTICATED: 1 @b · INVALID_RECIPIENT_SHAPE: 1 Time Agent',
    );
  },
  60_000,
);
