/**
 * The console's message story of a send to several agents that expects their replies tomorrow, read by an auditor
 * in a real browser (Debian's chromium driven by playwright-core, as console.e2e; skipped, saying so, only when it is
 * absent). It showed "to @a@b@c" (the list drawn with nothing between), "The log contradicts itself here: unexpected
 * ReplyRequested" (the send's own reply request, which `mailbox audit message` also called an anomaly, exit 1), and
 * "reply due 12:00:00" for a reply due the next day. Now: the recipients as a list, no anomaly, the due date.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleStory.e2e');
const { maybe } = consoleTest;

maybe(
  "a list send's story: its recipients as a list, its reply request no anomaly, the reply due with its date",
  async () => {
    const { server, browser } = consoleTest;
    const t = { ...(await server.register(['@s', '@a', '@b', '@c'])), ...(await server.register(['@ops'], 'auditor')) };
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@s'],
      body: { to: ['@a', '@b', '@c'], subject: 'review', body: 'x', expectsReplyBy: '1d' },
    });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    await server.call('POST', `/v1/messages/${id}/read`, { token: t['@b'] });
    await server.call('POST', '/v1/messages', { token: t['@c'], body: { to: '@s', subject: 're', body: 'ok', inReplyTo: id } });
    const story = await server.call('GET', `/v1/audit/messages/${id}`, { token: t['@ops'] });
    expect(story.body).toMatchObject({ anomalies: [], replyDueBy: expect.any(String) });
    const ledger = (await server.call('GET', `/v1/messages/${id}/delivery`, { token: t['@ops'] })).body;
    expect(ledger.summary).toMatchObject({ recipients: 3, inView: 3, read: 1, replied: 1 });

    const problems: string[] = [];
    const page = await browser.newPage();
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await consoleTest.signIn(page, t['@ops']);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Message story', exact: true }).click();
    await page.getByLabel('Message id').fill(id);
    await page.getByRole('button', { name: 'Show story' }).click();
    const shown = page.getByTestId('story');
    await shown.getByText('by @s to @a, @b, @c').waitFor();
    await page.getByTestId('ledger-summary').waitFor();
    expect(await shown.getByRole('alert').count()).toBe(0);
    expect(await shown.innerText()).not.toContain('contradicts');

    const [date, time]: string[] = await page.evaluate(
      `[new Intl.DateTimeFormat([], { year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(${JSON.stringify(ledger.replyDueBy)})),
        new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false }).format(new Date(${JSON.stringify(ledger.replyDueBy)}))]`,
    );
    const summary = await page.getByTestId('ledger-summary').innerText();
    expect(summary).toContain(
      `3 recipient(s): 3 in view · ${ledger.summary.woken} woken · ${ledger.summary.seen} seen · 1 read · 1 replied`,
    );
    expect(summary).toContain(`reply due ${date} ${time}`);
    expect(problems).toEqual([]);
  },
  60_000,
);

/*
 * A send to a name no agent holds (accepted with the UNREGISTERED_RECIPIENT warning) and to an agent retired since:
 * the story listed "@nobody  Delivered 2 s ago (#9)  unread" and the retired agent the same, as if both inboxes were
 * read by someone. Now each says why it will not be read: no agent holds the name, or the agent is retired (since when).
 */
maybe(
  'a story says which recipients no agent holds and which are retired, beside their receipts',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@snd', '@live', '@gone']);
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@snd'],
      body: { to: ['@live', '@gone', '@nobody'], subject: 'three ways', body: 'x' },
    });
    expect([sent.status, sent.body.warnings?.map((w: { code: string }) => w.code)]).toEqual([201, ['UNREGISTERED_RECIPIENT']]);
    expect((await server.call('DELETE', '/v1/agents/@gone', { token: server.adminToken })).status).toBe(200);

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Message story', exact: true }).click();
    await page.getByLabel('Message id').fill(sent.body.messageId);
    await page.getByRole('button', { name: 'Show story' }).click();
    const rows = page.getByTestId('recipients').locator('tbody tr');
    await rows.first().waitFor();
    const first = async (identity: string) =>
      (await rows.filter({ hasText: identity }).locator('td').first().innerText()).replace(/\s+/g, ' ');
    await page.getByTestId('story').getByText('3 recipient(s): 1 no agent holds, 1 retired').waitFor();
    expect(await first('@live')).toBe('@live');
    expect(await first('@gone')).toMatch(/^@gone \(retired (now|\d+ s ago): it will not read this\)$/);
    expect(await first('@nobody')).toBe('@nobody (no agent holds this name: it is read only if an agent registers as @nobody)');
  },
  60_000,
);
