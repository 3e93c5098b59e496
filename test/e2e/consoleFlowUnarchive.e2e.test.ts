/**
 * An unarchive in the live flow, in a real browser (Debian's chromium driven by playwright-core, as console.e2e;
 * skipped, saying so, only when it is absent). Its archive read "archived by @ben", the unarchive after it only "@ben".
 * Now it reads "unarchived by @ben".
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleFlowUnarchive.e2e');
const { maybe } = consoleTest;

maybe(
  'an unarchive reads "unarchived by" its agent, as an archive reads "archived by"',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await consoleTest.signIn(page, server.adminToken);
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@ana'],
      body: { to: ['@ben', '@cat'], subject: 's', body: 'x' },
    });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    expect((await server.call('POST', `/v1/messages/${id}/archive`, { token: t['@ben'] })).status).toBe(200);
    expect((await server.call('POST', `/v1/messages/${id}/unarchive`, { token: t['@ben'] })).status).toBe(200);

    const what = (type: string) => page.getByTestId('flow').locator(`tr[data-type="${type}"] td:nth-child(5)`);
    await what('MessageUnarchived').waitFor();
    expect(await what('MessageArchived').innerText()).toBe('archived by @ben');
    expect(await what('MessageUnarchived').innerText()).toBe('unarchived by @ben');
    expect(problems).toEqual([]);
  },
  60_000,
);
