/**
 * Long text in the live flow, in a real browser (Debian's chromium driven by playwright-core, as console.e2e; skipped,
 * saying so, only when it is absent). The What cell was one line cut with an ellipsis and nothing to show the rest: a
 * 200-character subject read "@ben → @ana: “Quarterly plan: the migration of every shard to the new clust…" at 1280 px,
 * with no title, no way to open it; at 400 px the fixed columns left the What cell 0 px wide (nothing of any entry
 * shown) and pushed the story link out of the window. Now the What cell wraps and shows its whole text, at 1280 px and
 * at 400 px, where each entry's What takes a line of its own across the window.
 */
import type { Page } from 'playwright-core';
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleFlowLongText.e2e');
const { maybe } = consoleTest;

/** The 200 characters a subject may have, its last word END so a cut shows. */
const SUBJECT = `Quarterly plan: ${'the migration of every shard to the new cluster, then '.repeat(4)}`.slice(0, 196) + ' END';

/** The flow's newest row: its What cell's text, whether any of it is cut, and where it and the story link are. */
async function newestRow(page: Page) {
  const row = page.getByTestId('flow').locator('tbody tr').first();
  const what = row.locator('td').nth(4);
  const box = (await what.boundingBox())!;
  const story = (await row.getByRole('button', { name: /^story/ }).boundingBox())!;
  const cut = await what.evaluate((el: any) => el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight);
  const sideways: boolean = await page.evaluate(
    "(() => { const main = document.querySelector('main'); return main.scrollWidth > main.clientWidth; })()",
  );
  return { text: await what.innerText(), box, story, cut, sideways };
}

maybe(
  "a long subject and recipient list are read whole in the flow, at 1280 px and at 400 px, the window's width kept",
  async () => {
    const { server, browser } = consoleTest;
    const names = ['@ana', '@ben', '@cat', '@dan', '@eve', '@fay', '@gus', '@hal', '@ivy', '@jon'];
    const t = await server.register(names);
    expect(SUBJECT).toHaveLength(200);
    let sent = 0;
    for (const width of [1280, 400]) {
      const page = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
      await consoleTest.signIn(page, server.adminToken);
      await page.getByTestId('flow-status').getByText('Stream: live').waitFor();
      const to = names.filter((name) => name !== '@ben');
      const reply = await server.call('POST', '/v1/messages', { token: t['@ben'], body: { to, subject: SUBJECT, body: 'x' } });
      expect(reply.status).toBe(201);
      sent += 1;
      await page.getByTestId('flow-status').getByText('Stream: live · 1 received').waitFor();
      const row = await newestRow(page);
      expect([width, row.text]).toEqual([width, `@ben → ${to.join(', ')}: “${SUBJECT}” [normal]`]);
      expect([width, row.cut, row.sideways]).toEqual([width, false, false]);
      expect(row.box.x).toBeGreaterThanOrEqual(0);
      expect(row.box.x + row.box.width).toBeLessThanOrEqual(width);
      expect(row.story.x + row.story.width).toBeLessThanOrEqual(width);
      if (width === 400) expect(row.box.width).toBeGreaterThan(300); // its own line across the window
      await page.close();
    }
    expect(sent).toBe(2);
  },
  60_000,
);
