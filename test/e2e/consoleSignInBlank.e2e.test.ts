/**
 * The console's sign-in form with a token that is blank or carries whitespace, in a real browser (Debian's chromium
 * driven by playwright-core, as console.e2e; skipped, saying so, only when it is absent). A token of spaces passed the
 * form (its `required` takes spaces) and was sent as no token at all: the operator read "Refused: Send Authorization:
 * Bearer <token>", as if the console had a bug. A token pasted with spaces or a tab around it was trimmed without a
 * word; one pasted as "Bearer <token>" was refused by the server in the same words. Now the form refuses a blank
 * token, and one with a space inside, itself (saying what to paste; nothing is sent), and trims a pasted token's
 * surrounding whitespace as it is pasted, saying so.
 */
import type { Page } from 'playwright-core';
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleSignInBlank.e2e');
const { maybe } = consoleTest;

/** A page on the sign-in form that counts the requests it makes to the API. */
async function signInForm(): Promise<{ page: Page; apiCalls: string[] }> {
  const page = await consoleTest.browser.newPage();
  const apiCalls: string[] = [];
  page.on('request', (request) => new URL(request.url()).pathname.startsWith('/v1/') && apiCalls.push(request.url()));
  await page.goto(`${consoleTest.server.url}/console`);
  await page.getByLabel('Admin or auditor token').waitFor();
  return { page, apiCalls };
}

const held = (page: Page): Promise<string[]> =>
  page.evaluate('Object.keys(sessionStorage).map((key) => sessionStorage.getItem(key))');

maybe(
  'a blank token, or one with a space inside, is refused by the form itself, saying what to paste; nothing is sent',
  async () => {
    const { server } = consoleTest;
    const t = await server.register(['@ops'], 'auditor');
    const { page, apiCalls } = await signInForm();
    const field = page.getByLabel('Admin or auditor token');
    const alert = page.getByRole('alert');
    for (const [typed, said] of [
      [
        '   ',
        "Enter a token: this one is only spaces. Paste the admin token (MAILBOX_ADMIN_TOKEN) or an auditor's (mailbox agent add @ops --role auditor).",
      ],
      [`Bearer ${t['@ops']}`, 'A token has no spaces in it: paste the token alone, without "Bearer " or anything around it.'],
    ]) {
      await field.fill(typed);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await alert.getByText(said, { exact: true }).waitFor();
      expect(await page.getByTestId('who').count()).toBe(0);
    }
    expect(apiCalls).toEqual([]);
    expect(await held(page)).toEqual([]);
  },
  60_000,
);

maybe(
  'a token pasted with whitespace around it is trimmed as it is pasted, saying so, and signs in',
  async () => {
    const { server } = consoleTest;
    const t = { ...(await server.register(['@a', '@b'])), ...(await server.register(['@audit'], 'auditor')) };
    const { page } = await signInForm();
    const field = page.getByLabel('Admin or auditor token');
    await field.fill(` \t${t['@audit']}  \t`);
    await page.getByTestId('signin').getByText('Removed the spaces around the pasted token (a token has none).').waitFor();
    expect(await field.inputValue()).toBe(t['@audit']);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('who').getByText('@audit').waitFor();
    expect(await held(page)).toEqual([t['@audit']]);

    // An agent's token, trimmed the same way, is still told apart.
    const second = await signInForm();
    await second.page.getByLabel('Admin or auditor token').fill(`${t['@a']} `);
    await second.page.getByRole('button', { name: 'Sign in' }).click();
    await second.page
      .getByRole('alert')
      .getByText('That is the token of agent @a; the console takes an admin or auditor token.')
      .waitFor();
    expect(await held(second.page)).toEqual([]);
  },
  60_000,
);
