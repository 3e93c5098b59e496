/**
 * The Health panel's unwoken alarm when it counts none, in a real browser (Debian's chromium driven by playwright-core,
 * as console.e2e; skipped, saying so, only when it is absent). It said "none: every message that expected a wake woke a
 * recipient within 60 s" while a message sent a moment ago to an agent with no wake stream had woken nobody (it is
 * not unwoken until the SLA has passed), and mail its recipients have seen or read is never unwoken either. Now it
 * says only what the count means: no message has gone the SLA without waking a recipient.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleUnwokenNone.e2e', { wakeSlaMs: 60_000 });
const { maybe } = consoleTest;

maybe(
  'with a message that woke nobody yet, "none" claims no wake that did not happen',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@a', '@b']);
    const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 's', body: 'x' } });
    const ledger = (await server.call('GET', `/v1/messages/${sent.body.messageId}/delivery`, { token: server.adminToken })).body;
    expect(ledger.summary).toMatchObject({ recipients: 1, woken: 0, seen: 0, read: 0 });
    expect((await server.call('GET', '/v1/audit/unwoken', { token: server.adminToken })).body).toMatchObject({ count: 0 });

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Health', exact: true }).click();
    const unwoken = page.getByTestId('unwoken');
    await unwoken.waitFor();
    expect((await unwoken.innerText()).replace(/\s+/g, ' ')).toBe(
      'none: no message has gone 60 s without waking a recipient (mail that all its recipients due a wake saw or read needs no wake)',
    );
  },
  60_000,
);
