/**
 * The live flow before anything is written, in a real browser (Debian's chromium driven by playwright-core, as
 * console.e2e; skipped, saying so, only when it is absent). It showed an empty table under "0 received" on a log with
 * events in it, which reads as an empty mailbox: the flow shows only what is written after it opens. Now it says so,
 * with the position it opened at and where the earlier events are; the note goes once an entry comes, and a Clear does
 * not bring it back.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleFlowEmpty.e2e');
const { maybe } = consoleTest;

maybe(
  'an empty flow says it shows events from the position it opened at, not that the log is empty',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben']);
    const head = (await server.call('GET', '/readyz')).body.eventStore.head as string;
    expect(Number(head)).toBeGreaterThan(0);

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
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
