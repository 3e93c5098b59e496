/**
 * The console by keyboard, in a real browser (Debian's chromium driven by playwright-core, as console.e2e; skipped,
 * saying so, only when it is absent). Enter on a live flow row's "story" link opened the message's story, but the
 * link went with the flow and the focus with it, to the page's body: the next Tab started over at "Sign out", and a
 * screen reader said nothing of the story shown. Likewise the story's "show this thread in the live flow". Now the
 * panel opened so takes the focus on its heading, and the next Tab goes into it.
 */
import type { Locator, Page } from 'playwright-core';
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleKeyboardFocus.e2e');
const { maybe } = consoleTest;

const focused = (page: Page): Promise<string> =>
  page.evaluate(
    "(() => { const el = document.activeElement; return el ? `${el.tagName} ${el.getAttribute('name') ?? el.textContent.trim().slice(0, 40)}` : 'none'; })()",
  );

const hasFocus = (field: Locator): Promise<boolean> => field.evaluate((el: any) => el === el.ownerDocument.activeElement);

maybe(
  "a story or a thread opened by keyboard takes the focus to the panel it opens, not the page's start",
  async () => {
    const { server } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const page = await consoleTest.openLive(server.adminToken);
    await server.call('POST', '/v1/messages', { token: t['@ben'], body: { to: ['@ana', '@cat'], subject: 'kb', body: 'x' } });
    const flow = page.getByTestId('flow');
    await flow.getByText('“kb”').waitFor();

    await flow
      .getByRole('button', { name: /^story/ })
      .first()
      .focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('story').getByText('by @ben to @ana, @cat').waitFor();
    expect(await focused(page)).toBe('H2 Message story');
    await page.keyboard.press('Tab');
    expect(await hasFocus(page.getByLabel('Message id'))).toBe(true);

    await page.getByRole('button', { name: 'show this thread in the live flow' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();
    expect(await focused(page)).toBe('H2 Live flow');
    await page.keyboard.press('Tab');
    expect(await hasFocus(page.getByLabel('Agent', { exact: true }))).toBe(true);
  },
  60_000,
);
