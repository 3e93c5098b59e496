/**
 * What the console's register-agent dialog claims, in a real browser (Debian's chromium driven by playwright-core, as
 * console.e2e; skipped, saying so, only when it is absent). Its confirmation said "A new agent @eve is written to the
 * log" before the server was asked, nothing showed while it was asked, and a refusal (409 AGENT_EXISTS, 400 for a name
 * that is no identity) was a bare "Refused: ..." under a dialog that had already said it was written. Now the dialog
 * says the server is asked and that only its acceptance writes; the notice says it waits while the server has not
 * answered; a refusal shows its code and message and that nothing was written; "registered, written to the log" with
 * the token only after the 201; and no answer at all is said to leave the outcome unknown.
 */
import type { Page, Route } from 'playwright-core';
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleRegisterOutcome.e2e');
const { maybe } = consoleTest;

/** Fills the form with `identity` and confirms the dialog, whose text is returned. */
async function register(page: Page, identity: string): Promise<string> {
  await page.getByLabel('New identity').fill(identity);
  await page.getByRole('button', { name: 'Register…' }).click();
  const dialog = page.getByTestId('confirm');
  const said = await dialog.locator('p').innerText();
  await dialog.getByRole('button', { name: `Register ${identity}` }).click();
  return said;
}

maybe(
  'the register dialog claims a write only after the 201; waiting, refused and unanswered are each said as such',
  async () => {
    const { server, browser } = consoleTest;
    await server.register(['@ana', '@ben', '@cat']);
    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Agents', exact: true }).click();
    const notice = page.getByTestId('notice');

    // The server's answer to the registration is held until the test lets it through.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let abortNext = false;
    await page.route('**/v1/agents', async (route: Route) => {
      if (route.request().method() !== 'POST') return route.continue();
      if (abortNext) return route.abort('connectionreset');
      await held;
      return route.continue();
    });

    const before = await server.eventCount();
    const said = await register(page, '@eve');
    expect(said).not.toMatch(/is written to the log/);
    expect(said).toContain('Only if it accepts is the registration written to the log');
    await notice.getByText('Registering @eve: waiting for the server…').waitFor();
    expect(await notice.getAttribute('aria-busy')).toBe('true');
    expect(await notice.innerText()).not.toContain('registered');
    expect(await notice.locator('code.token').count()).toBe(0);
    expect(await server.eventCount()).toBe(before);

    release();
    await notice.getByText('@eve registered, written to the log').waitFor();
    expect(await notice.getAttribute('aria-busy')).toBe('false');
    const token = (await notice.locator('code.token').textContent())!;
    await expect(server.call('GET', '/v1/whoami', { token }).then((r) => r.body)).resolves.toEqual({
      identity: '@eve',
      role: 'agent',
      limits: { maxBodyBytes: 65536 },
    });
    expect(await server.eventCount()).toBe(before + 1);

    // Refused: the name is taken (409), or is no identity (400). The code and the server's own message, nothing written.
    for (const [identity, code, status] of [
      ['@eve', 'AGENT_EXISTS', 409],
      ['eve', undefined, 400],
    ] as const) {
      const direct = await server.call('POST', '/v1/agents', { token: server.adminToken, body: { identity, role: 'agent' } });
      expect(direct.status).toBe(status);
      if (code) expect(direct.body.code).toBe(code);
      const count = await server.eventCount();
      await register(page, identity);
      await notice.getByText(`Refused (${direct.body.code}):`).waitFor();
      expect(await notice.innerText()).toBe(`Refused (${direct.body.code}): ${direct.body.message} Nothing was written.`);
      expect(await notice.locator('code.token').count()).toBe(0);
      expect(await server.eventCount()).toBe(count);
    }

    // No answer (the connection dropped): whether it was registered is not known, and the notice claims neither.
    abortNext = true;
    await register(page, '@fay');
    await notice.getByText('No answer from the server').waitFor();
    const unanswered = await notice.innerText();
    expect(unanswered).toContain('Whether @fay was registered is not known');
    expect(unanswered).not.toMatch(/registered,|Refused/);
  },
  60_000,
);
