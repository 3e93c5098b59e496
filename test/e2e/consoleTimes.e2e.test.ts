/**
 * How the console says when, in a real browser (Debian's chromium driven by playwright-core, as console.e2e; skipped,
 * saying so, only when it is absent), in a zone that is not UTC (Paris, UTC+1 in December) with the page's clock held
 * by the test. The live flow's rows said the server's exact UTC instants ("woken via stream at
 * 2026-12-03T18:20:11.123Z"), which an operator in Paris reads as an hour off, and the agents table's "Oldest unread"
 * said "3m 20s", which reads like a time or a duration of something else. Now an instant reads as local time, with how
 * long ago or how soon when within the hour (and it follows the clock); an age says it is one ("3 min ago"); the exact
 * instant stays in the element's datetime and tooltip.
 */
import type { Page } from 'playwright-core';
import { useConsoleBrowser } from '../support/chromium';

/** The server's clock: everything here is written at T (18:20 UTC, 19:20 in Paris). */
const T = Date.parse('2026-12-03T18:20:00.000Z');
const consoleTest = useConsoleBrowser('consoleTimes.e2e', {}, { clock: { now: () => new Date(T) } });
const { maybe } = consoleTest;

/** A page in Paris whose clock says `at` (its timers still run: the stream and the polls go on). */
async function parisPage(at: number): Promise<Page> {
  const context = await consoleTest.browser.newContext({ timezoneId: 'Europe/Paris', viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.clock.setFixedTime(at);
  return page;
}

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

maybe(
  "the live flow's rows say local times, relative when near and following the clock, the exact instant kept",
  async () => {
    const { server } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const page = await parisPage(T + 12_000);
    await consoleTest.signIn(page, server.adminToken);
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();

    const dueBy = new Date(T + 120_000).toISOString();
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@ana'],
      body: { to: '@ben', subject: 'due soon', body: 'x', expectsReplyBy: dueBy },
    });
    expect(sent.status).toBe(201);
    expect((await server.call('GET', '/v1/messages', { token: t['@ben'] })).body.messages).toHaveLength(1);

    const flow = page.getByTestId('flow');
    const requested = flow.locator('tr[data-type="ReplyRequested"]');
    const seen = flow.locator('tr[data-type="MessagesSeen"]');
    await seen.waitFor();
    const what = (row: typeof seen) => row.locator('td.what').innerText();
    expect(await what(requested)).toBe("every recipient's reply expected by 19:22:00 (in 1 min)");
    expect(await what(seen)).toBe('saw 1 message at 19:20:00 (12 s ago) (listed or opened, which does not mark it read)');
    // The exact instant is the element's, for a tooltip and for a tool reading the page.
    const due = requested.locator('td.what time');
    expect(await due.getAttribute('datetime')).toBe(dueBy);
    expect(await due.getAttribute('title')).toContain(`(${dueBy})`);
    const time = requested.locator('td').nth(1).locator('time');
    expect([await time.innerText(), await time.getAttribute('datetime')]).toEqual(['19:20:00', new Date(T).toISOString()]);
    for (const row of await flow.locator('tbody tr').allInnerTexts()) expect([row, ISO.test(row)]).toEqual([row, false]);

    // The page's clock moves on: a row drawn once does not keep saying "in 1 min".
    await page.clock.setFixedTime(T + 150_000);
    await requested.locator('td.what').getByText('19:22:00 (30 s ago)').waitFor();
    await seen.locator('td.what').getByText('19:20:00 (2 min ago)').waitFor();
  },
  60_000,
);

maybe(
  'the oldest unread reads as an age, "3 min ago", with its instant in the tooltip',
  async () => {
    const { server } = consoleTest;
    const t = await server.register(['@dan', '@eve', '@fay']);
    await server.call('POST', '/v1/messages', { token: t['@dan'], body: { to: '@eve', subject: 'waiting', body: 'x' } });
    const page = await parisPage(T + 200_000);
    await consoleTest.signIn(page, server.adminToken);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Agents', exact: true }).click();
    const header = await page.getByTestId('agents').locator('thead th').allInnerTexts();
    const column = header.findIndex((h) => h.startsWith('Oldest unread'));
    const row = (identity: string) =>
      page
        .getByTestId('agents')
        .locator('tbody tr')
        .filter({ has: page.getByRole('cell', { name: identity, exact: true }) });
    await row('@eve').waitFor();
    const cell = row('@eve').locator('td').nth(column);
    expect(await cell.innerText()).toBe('3 min ago');
    expect(await cell.locator('time').getAttribute('datetime')).toBe(new Date(T).toISOString());
    expect(await cell.locator('time').getAttribute('title')).toContain(`(${new Date(T).toISOString()})`);
    expect(await row('@fay').locator('td').nth(column).innerText()).toBe('–');

    await page.clock.setFixedTime(T + 2 * 3600_000 + 300_000);
    await cell.getByText('2 h 5 min ago').waitFor();
  },
  60_000,
);
