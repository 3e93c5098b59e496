/**
 * How the console says when, in a real browser (Debian's chromium driven by playwright-core, as console.e2e; skipped,
 * saying so, only when it is absent), in a zone that is not UTC (Paris, UTC+1 in December) with the page's clock held
 * by the test. The live flow's rows said the server's exact UTC instants ("woken via stream at
 * 2026-12-03T18:20:11.123Z"), which an operator in Paris reads as an hour off, and the agents table's "Oldest unread"
 * said "3m 20s", which reads like a time or a duration of something else. Now an instant reads as local time, with how
 * long ago or how soon when within the hour (and it follows the clock); an age says it is one ("3 min ago"); the exact
 * instant stays in the element's datetime and tooltip.
 * The message story, its delivery ledger and the health panel still said bare clock times ("19:20:00" for a read 12 s
 * ago, "last met at 19:20:00, 12s ago", "tries again by 19:20:05", the unwoken table's "Waiting 3m 20s"): they now say
 * them the same way (one formatter, web/src/instant.tsx).
 */
import type { Page } from 'playwright-core';
import type { ProjectionStore } from '../../src/projections/projectionStore';
import { useConsoleBrowser } from '../support/chromium';
import { failApplies } from '../support/heldApplies';
import { waitFor } from '../support/waitFor';

/** The server's clock: everything here is written at T (18:20 UTC, 19:20 in Paris), unless a test moves it. */
const T = Date.parse('2026-12-03T18:20:00.000Z');
let serverNow = T;
const consoleTest = useConsoleBrowser('consoleTimes.e2e', { wakeSlaMs: 60_000 }, { clock: { now: () => new Date(serverNow) } });
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
    // "Last activity" said "–" for an agent that had claimed and worked a task: it counts sends and reads only (what
    // the heartbeat's idle test reads), and its header now says so.
    const last = header.findIndex((h) => h.startsWith('Last send or read'));
    expect(last).toBeGreaterThan(column);
    expect(await row('@dan').locator('td').nth(last).innerText()).toBe('3 min ago');
    expect(await row('@eve').locator('td').nth(last).innerText()).toBe('–');

    await page.clock.setFixedTime(T + 2 * 3600_000 + 300_000);
    await cell.getByText('2 h 5 min ago').waitFor();
  },
  60_000,
);

/** Opens `panel` from the navigation. */
const openPanel = (page: Page, panel: string) =>
  page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: panel, exact: true }).click();

maybe(
  'the message story and its delivery ledger say when as the rest of the console does, following the clock',
  async () => {
    const { server } = consoleTest;
    const t = await server.register(['@gia', '@hal', '@ivy']);
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@gia'],
      body: { to: ['@hal', '@ivy'], subject: 'review', body: 'x', task: {}, expectsReplyBy: new Date(T + 120_000).toISOString() },
    });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    expect((await server.call('POST', `/v1/messages/${id}/read`, { token: t['@hal'] })).status).toBe(200);
    expect((await server.call('POST', `/v1/tasks/${id}/claim`, { token: t['@hal'], body: { leaseSeconds: 120 } })).status).toBe(
      200,
    );

    const page = await parisPage(T + 12_000);
    await consoleTest.signIn(page, server.adminToken);
    await openPanel(page, 'Message story');
    await page.getByLabel('Message id').fill(id);
    await page.getByRole('button', { name: 'Show story' }).click();
    const story = page.getByTestId('story');
    await page.getByTestId('ledger-rows').waitFor();
    expect(await story.locator('dd').first().innerText()).toMatch(/^19:20:00 \(12 s ago\) by @gia to @hal, @ivy/);
    const recipient = (table: string, identity: string) =>
      page
        .getByTestId(table)
        .locator('tbody tr')
        .filter({ has: page.getByRole('cell', { name: identity, exact: true }) });
    const cells = async (table: string, identity: string) =>
      (await recipient(table, identity).locator('td').allInnerTexts()).slice(1);
    const [delivered, read, archived] = await cells('recipients', '@hal');
    expect([delivered, read, archived]).toEqual([
      expect.stringMatching(/^12 s ago \(#\d+\)$/),
      expect.stringMatching(/^12 s ago \(#\d+\)$/),
      '–',
    ]);
    expect((await cells('recipients', '@ivy')).slice(1)).toEqual(['unread', '–']);
    // Accepted, in view, woken, seen, read, replied.
    expect(await cells('ledger-rows', '@hal')).toEqual([
      expect.stringMatching(/^#\d+$/),
      expect.stringMatching(/^#\d+$/),
      'not woken',
      '–',
      '12 s ago',
      '–',
    ]);
    expect(await page.getByTestId('ledger-summary').innerText()).toContain('reply due 19:22:00 (in 1 min)');
    expect(await page.getByTestId('task-history').locator('tbody td').first().innerText()).toBe('12 s ago');
    // A change's own instants too (it said "lease to 2026-12-03T18:22:00.000Z").
    expect(await page.getByTestId('task-history').locator('tbody td').nth(3).innerText()).toMatch(
      /claimed by @hal \(lease to 19:22:00 \(in 1 min\)\)$/,
    );
    // Every instant keeps its exact value for a tooltip and for a tool reading the page; none reads as a bare UTC time.
    const times = story.locator('time');
    expect(await times.count()).toBeGreaterThanOrEqual(7);
    for (const time of await times.all()) {
      const at = (await time.getAttribute('datetime'))!;
      expect(await time.getAttribute('title')).toContain(`(${at})`);
    }
    expect(await story.innerText()).not.toMatch(ISO);

    await page.clock.setFixedTime(T + 150_000);
    await recipient('ledger-rows', '@hal').getByText('2 min ago').first().waitFor();
    await page.getByTestId('ledger-summary').getByText('19:22:00 (30 s ago)').waitFor();
  },
  60_000,
);

maybe(
  "the health panel says the projector's failure, its next try and the unwoken messages' times as the rest of the console does",
  async () => {
    const { server } = consoleTest;
    const t = await server.register(['@jon', '@kim', '@lou']);
    const applies = failApplies(server.mailbox.projections as ProjectionStore);
    try {
      await server.call('POST', '/v1/messages', { token: t['@jon'], body: { to: ['@kim', '@lou'], subject: 'late', body: 'x' } });
      await waitFor(
        async () => (await server.call('GET', '/readyz')).body.projections?.lastError === 'the views store hiccuped',
        {
          what: 'the failure in /readyz',
        },
      );
      // The projector keeps the time of its failures by the wall clock (not the mailbox's): the page's clock is left to run.
      const context = await consoleTest.browser.newContext({ timezoneId: 'Europe/Paris' });
      const page = await context.newPage();
      await consoleTest.signIn(page, server.adminToken);
      await openPanel(page, 'Health');
      const projections = page.getByTestId('projections');
      await projections.getByText('last error: the views store hiccuped').waitFor();
      await projections.getByText(/tries again by/).waitFor({ timeout: 15_000 });
      const text = (await projections.innerText()).replace(/\s+/g, ' ');
      expect(text).toMatch(/last met at \d\d:\d\d:\d\d \((now|\d+ s ago)\)/);
      expect(text).toMatch(/tries again by \d\d:\d\d:\d\d \((in \d+ s|now|\d+ s ago)\)/);
      for (const time of await projections.locator('time').all())
        expect(await time.getAttribute('title')).toContain(`(${await time.getAttribute('datetime')})`);
    } finally {
      applies.recover();
    }

    // Two minutes on, by the server's clock and the page's: the messages sent at T that woke nobody are unwoken.
    serverNow = T + 200_000;
    try {
      const page = await parisPage(T + 200_000);
      await consoleTest.signIn(page, server.adminToken);
      await openPanel(page, 'Health');
      const oldest = page.getByTestId('unwoken-oldest');
      await oldest.waitFor();
      const header = await oldest.locator('thead th').allInnerTexts();
      const row = await oldest.locator('tbody tr').first().locator('td').allInnerTexts();
      expect([row[header.indexOf('Sent')], row[header.indexOf('Waiting')]]).toEqual(['19:20:00', '3 min ago']);
      await page.clock.setFixedTime(T + 2 * 3600_000 + 300_000);
      await oldest.locator('tbody tr').first().getByText('2 h 5 min ago').waitFor();
    } finally {
      serverNow = T;
    }
  },
  60_000,
);

/*
 * The charts said their times as uPlot does by default, "9:15pm" on the axis and "12/3/26 9:15:20pm" in the legend,
 * where the rest of the console says "21:15:20 (12 s ago)". The axis is drawn on the canvas; the legend is read here.
 */
maybe(
  "the charts' legend says a sample's time as the rest of the console does",
  async () => {
    const { server } = consoleTest;
    // The samples are taken by the wall clock (one when the server started): the page's clock is left to run.
    const page = await (await consoleTest.browser.newContext({ timezoneId: 'Europe/Paris' })).newPage();
    await consoleTest.signIn(page, server.adminToken);
    await openPanel(page, 'Charts');
    const chart = page.getByTestId('charts').locator('.uplot').first();
    const over = chart.locator('.u-over');
    await over.waitFor();
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
    const time = chart.locator('.u-legend .u-series').first().locator('.u-value');
    await waitFor(async () => (await time.innerText()) !== '–' && (await time.innerText()) !== '--', {
      what: 'the legend showing the sample under the cursor',
    });
    expect(await time.innerText()).toMatch(/^\d\d:\d\d:\d\d \((now|\d+ s ago|\d+ min ago)\)$/);
  },
  60_000,
);
