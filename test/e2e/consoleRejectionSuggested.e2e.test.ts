/**
 * What the Rejections panel says a refusal suggested, in a real browser (Debian's chromium driven by playwright-core, as
 * console.e2e; skipped, saying so, only when it is absent). Its "Suggested" column stood beside a "To" column that only
 * a recipient filled: a misspelt field's suggestion ("subject") read as a recipient to write to, and a retire of
 * "@Ben" showed "@ben" suggested beside nothing, and a list's wrong entry's suggestion read as one for the whole list.
 * Now a "Refused" column names what the refusal was about (the recipient, the list's entry, the agent, the field) and
 * "Suggested instead" shows the refusal's own suggestions, a blank when it offered none.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleRejectionSuggested.e2e');
const { maybe } = consoleTest;

maybe(
  'each rejection shows what was refused and the suggestions its refusal carried, nothing else',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const before = await server.eventCount();
    const refusals = [
      await server.call('POST', '/v1/messages', { token: t['@cat'], body: { to: 'ben', subject: 's', body: 'x' } }),
      await server.call('POST', '/v1/messages', { token: t['@cat'], body: { to: ['@ana', 'bn'], subject: 's', body: 'x' } }),
      await server.call('POST', '/v1/messages', { token: t['@cat'], body: { to: '@ana', subjct: 's', body: 'x' } }),
      await server.call('DELETE', '/v1/agents/@Ben', { token: server.adminToken }),
      await server.call('POST', '/v1/messages', { token: t['@cat'], body: { to: 'AGENT:gpt', subject: 's', body: 'x' } }),
    ];
    expect(refusals.map((r) => [r.body.code, r.body.suggestions])).toEqual([
      ['INVALID_RECIPIENT_SHAPE', ['@ben']],
      ['INVALID_RECIPIENT_SHAPE', ['@ben']],
      ['UNKNOWN_FIELD', ['subject']],
      ['AGENT_NOT_FOUND', ['@ben']],
      ['INVALID_RECIPIENT_SHAPE', undefined],
    ]);
    expect(await server.eventCount()).toBe(before); // refused: nothing written

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Rejections', exact: true }).click();
    const table = page.getByTestId('rejections');
    await table.locator('tbody tr').nth(4).waitFor();
    const header = (await table.locator('thead th').allInnerTexts()).map((h) => h.trim());
    const refused = header.indexOf('Refused');
    const suggested = header.indexOf('Suggested instead');
    expect([refused, suggested]).not.toContain(-1);
    const rows = (await table.locator('tbody tr').allInnerTexts()).map((row) => row.split('\t'));
    // Newest first.
    expect(rows.map((row) => [row[3], row[refused], row[suggested]])).toEqual([
      ['INVALID_RECIPIENT_SHAPE', 'to: AGENT:gpt', ''],
      ['AGENT_NOT_FOUND', 'agent: @Ben', '@ben'],
      ['UNKNOWN_FIELD', 'field: subjct', 'subject'],
      ['INVALID_RECIPIENT_SHAPE', 'entry bn of to: @ana, bn', '@ben'],
      ['INVALID_RECIPIENT_SHAPE', 'to: ben', '@ben'],
    ]);
    // When: said as an operator reads it ("12 s ago"), the exact instant recorded in the tooltip and datetime.
    const recorded = (await server.call('GET', '/v1/audit/rejections?limit=1', { token: server.adminToken })).body.rejections;
    const time = table.locator('tbody tr').first().locator('td').first().locator('time');
    expect(await time.getAttribute('datetime')).toBe(recorded[0].at);
    expect(await time.getAttribute('title')).toContain(`(${recorded[0].at})`);
    expect(rows[0][0]).toMatch(/^(now|\d+ s ago)$/);
  },
  60_000,
);
