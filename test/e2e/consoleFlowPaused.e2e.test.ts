/**
 * The live flow paused, in a real browser (Debian's chromium driven by playwright-core, as console.e2e; skipped, saying
 * so, only when it is absent). While paused its status went on reading "Stream: live · 1 received" as entries came:
 * the count stood still, and nothing said the flow was paused nor that entries were waiting. Now it counts what comes
 * and says how many are held until Resume; Resume shows them, in order, and the note goes.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleFlowPaused.e2e');
const { maybe } = consoleTest;

maybe(
  'a paused flow says it is paused and how many entries it holds, and still counts them',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const send = (from: string, to: string, subject: string) =>
      server.call('POST', '/v1/messages', { token: t[from], body: { to, subject, body: 'x' } });
    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    const status = page.getByTestId('flow-status');
    const flow = page.getByTestId('flow');
    await status.getByText('Stream: live').waitFor();
    await send('@ben', '@ana', 'one');
    await flow.getByText('“one”').waitFor();

    await page.getByRole('button', { name: 'Pause' }).click();
    await status.getByText('paused').waitFor({ timeout: 5000 });
    await send('@cat', '@ben', 'two');
    await send('@ana', '@cat', 'three');
    await status
      .getByText('Stream: live · 3 received · paused: 2 new entries held, not shown (Resume shows them)')
      .waitFor({ timeout: 5000 });
    expect(await flow.locator('tbody tr').allInnerTexts()).toEqual([expect.stringContaining('“one”')]);

    await page.getByRole('button', { name: 'Resume' }).click();
    await flow.getByText('“three”').waitFor();
    expect((await flow.locator('tbody tr').allInnerTexts()).map((row) => /“(\w+)”/.exec(row)![1])).toEqual([
      'three',
      'two',
      'one',
    ]);
    expect(await status.innerText()).toBe('Stream: live · 3 received');
  },
  60_000,
);
