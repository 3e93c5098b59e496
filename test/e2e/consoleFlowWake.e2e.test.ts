/**
 * The live flow's wake entries, in a real browser (Debian's chromium driven by playwright-core, as console.e2e;
 * skipped, saying so, only when it is absent). A broadcast that woke two agents showed two rows "system:wake-streams |
 * woken via stream at 04:20:39": who was woken was nowhere in the row. Now each names its agent: "@ben woken via stream
 * at ...".
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleFlowWake.e2e');
const { maybe } = consoleTest;

maybe(
  'each wake in the live flow names the agent it woke',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const problems: string[] = [];
    const page = await browser.newPage();
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await consoleTest.signIn(page, server.adminToken);
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();

    const streams = new AbortController();
    for (const who of ['@ben', '@cat']) {
      const wake = await fetch(`${server.url}/v1/wake`, {
        headers: { authorization: `Bearer ${t[who]}` },
        signal: streams.signal,
      });
      expect(wake.status).toBe(200);
      void wake.body!.pipeTo(new WritableStream()).catch(() => undefined);
    }
    try {
      await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Agents', exact: true }).click();
      for (const who of ['@ben', '@cat']) {
        await page.getByRole('row').filter({ hasText: who }).getByRole('cell', { name: '1', exact: true }).waitFor();
      }
      await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Live flow', exact: true }).click();
      const sent = await server.call('POST', '/v1/messages', {
        token: t['@ana'],
        body: { to: 'AGENT:*', subject: 's', body: 'x' },
      });
      expect(sent.status).toBe(201);
      const wakes = page.getByTestId('flow').locator('tr[data-type="WakeObserved"]');
      await wakes.nth(1).waitFor();
      const whats = (await wakes.locator('td:nth-child(5)').allInnerTexts()).sort();
      expect(whats).toEqual([
        expect.stringMatching(/^@ben woken via stream at /),
        expect.stringMatching(/^@cat woken via stream at /),
      ]);
      expect(problems).toEqual([]);
    } finally {
      streams.abort();
    }
  },
  60_000,
);
