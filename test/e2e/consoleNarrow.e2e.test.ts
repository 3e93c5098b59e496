/**
 * The console in a narrow window (400 px: a phone, a split screen), in a real browser (Debian's chromium driven by
 * playwright-core, as console.e2e; skipped, saying so, only when it is absent). The panel list kept its 11rem column
 * beside the panel, which was left under 250 px: the agents table showed three columns and the rest only by
 * scrolling sideways. Now the panel list goes above the panel, which has the window's whole width.
 */
import { useConsoleBrowser } from '../support/chromium';

/** How far the server's clock runs ahead of the wall clock: moved on to make mail unwoken (the SLA by its clock). */
let ahead = 0;
const consoleTest = useConsoleBrowser(
  'consoleNarrow.e2e',
  { wakeSlaMs: 60_000 },
  { clock: { now: () => new Date(Date.now() + ahead) } },
);
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

/*
 * The Rejections panel at 400 px: its seven columns left each a sliver, what the caller was told ran off the right
 * edge (read only by scrolling sideways) and each row stood a screen tall. Now each refusal is a block within the
 * width: what it was told across it, what was suggested labelled as such.
 */
maybe(
  'at 400 px every refusal is read whole within the width, its suggestion labelled',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@dot', '@eli', '@fox']);
    const before = await server.eventCount();
    const refused = await server.call('POST', '/v1/messages', { token: t['@fox'], body: { to: 'eli', subject: 's', body: 'x' } });
    expect([refused.status, refused.body.suggestions]).toEqual([400, ['@eli']]);
    expect(await server.eventCount()).toBe(before);

    const page = await (await browser.newContext({ viewport: { width: 400, height: 800 } })).newPage();
    await consoleTest.signIn(page, server.adminToken);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Rejections', exact: true }).click();
    const row = page.getByTestId('rejections').locator('tbody tr').first();
    await row.getByText(refused.body.message).waitFor();
    for (const cell of await row.locator('td').all()) {
      const box = await cell.boundingBox();
      if (box === null) continue; // an empty cell is not drawn
      expect([await cell.innerText(), box.x >= 0 && box.x + box.width <= 400]).toEqual([await cell.innerText(), true]);
    }
    expect((await row.boundingBox())!.height).toBeLessThan(300);
    await row.getByText('suggested instead: @eli').waitFor();
  },
  60_000,
);

/*
 * The agents table (nine columns) and the Health panel's unwoken table (six, beside their labels) were wider than a
 * 400 px window: the page itself scrolled sideways, the header and the panel list stopped at 400 px with the panel
 * running on past them, and "Sign out" sat in the middle of the page. Now the page is never wider than the window: a
 * wide table scrolls inside the panel, and the Health facts put each label above its value.
 */
maybe(
  'at 400 px no panel makes the page wider than the window; a wide table scrolls within the panel',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@gil', '@hua', '@ida']);
    for (const to of ['@hua', '@ida'])
      expect(
        (await server.call('POST', '/v1/messages', { token: t['@gil'], body: { to, subject: 'waiting', body: 'x' } })).status,
      ).toBe(201);
    ahead = 120_000;
    try {
      const page = await (await browser.newContext({ viewport: { width: 400, height: 800 } })).newPage();
      await consoleTest.signIn(page, server.adminToken);
      const nav = page.getByRole('navigation', { name: 'Panels' });
      const pageWidth = () => page.evaluate('document.documentElement.scrollWidth');
      await nav.getByRole('button', { name: 'Agents', exact: true }).click();
      await page.getByTestId('agents').getByRole('cell', { name: '@ida', exact: true }).waitFor();
      expect(await pageWidth()).toBe(400);
      await nav.getByRole('button', { name: 'Health', exact: true }).click();
      await page.getByTestId('unwoken-oldest').waitFor();
      expect(await pageWidth()).toBe(400);
      const signOut = (await page.getByRole('button', { name: 'Sign out' }).boundingBox())!;
      expect(signOut.x + signOut.width).toBeLessThanOrEqual(400);
      // Each label of the Health facts is above its value, which has the panel's width.
      const label = (await page.getByTestId('health').getByText('Unwoken alarms', { exact: true }).boundingBox())!;
      const alarm = (await page.getByTestId('unwoken').boundingBox())!;
      expect(alarm.y).toBeGreaterThan(label.y);
      expect(alarm.x).toBeLessThan(label.x + 10);
    } finally {
      ahead = 0;
    }
  },
  60_000,
);
