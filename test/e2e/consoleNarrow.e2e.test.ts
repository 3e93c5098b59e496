/**
 * The console in a narrow window (400 px: a phone, a split screen), in a real browser (Debian's chromium driven by
 * playwright-core, as console.e2e; skipped, saying so, only when it is absent). The panel list kept its 11rem column
 * beside the panel, which was left under 250 px: the agents table showed three columns and the rest only by
 * scrolling sideways. Now the panel list goes above the panel, which has the window's whole width.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleNarrow.e2e');
const { maybe } = consoleTest;

maybe(
  'at 400 px the panel has the whole width and every panel is one tap away above it',
  async () => {
    const { server, browser } = consoleTest;
    await server.register(['@ana', '@ben', '@cat']);
    const page = await (await browser.newContext({ viewport: { width: 400, height: 800 } })).newPage();
    await consoleTest.signIn(page, server.adminToken);
    const nav = page.getByRole('navigation', { name: 'Panels' });
    await nav.getByRole('button', { name: 'Agents', exact: true }).click();
    await page.getByTestId('agents').getByRole('cell', { name: '@ana', exact: true }).waitFor();

    const main = (await page.locator('main').boundingBox())!;
    expect(main.x).toBeLessThan(10);
    expect(main.width).toBeGreaterThan(390);
    const panels = (await nav.boundingBox())!;
    expect(panels.y + panels.height).toBeLessThanOrEqual(main.y + 1);
    for (const name of ['Live flow', 'Agents', 'Message story', 'Rejections', 'Health', 'Charts']) {
      const box = (await nav.getByRole('button', { name, exact: true }).boundingBox())!;
      expect([name, box.x >= 0 && box.x + box.width <= 400]).toEqual([name, true]);
    }
  },
  60_000,
);
