/**
 * A subject holding a right-to-left override (U+202E), in a real browser (Debian's chromium driven by playwright-core,
 * as console.e2e; skipped, saying so, only when it is absent). The override ran on past the subject into the console's
 * own words: the live flow read "“…rtl” [lamron]" and the story "… · 1 etyb · lamron ytiroirp". Now the subject is
 * isolated: it shows as sent, and the words after it read left to right. A caller's text the server quotes in its
 * own (a refusal's message, a task's reason in the flow) reversed the server's words after it too ("allowed fields"
 * drawn backwards in Rejections); there the override shows as "<U+202E>", and the server's words read left to right
 * (the story's task history escapes it itself: checked too).
 */
import type { Locator } from 'playwright-core';
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleSubjectBidi.e2e');
const { maybe } = consoleTest;

const SUBJECT = 'status \u202Ereport';

/**
 * Where `word`'s first and last letters are drawn in `where` (its first occurrence in a text node): left to right when
 * the first is left of the last.
 */
async function drawnLeftToRight(where: Locator, word: string): Promise<boolean> {
  return where.evaluate((root: any, w: string) => {
    const walker = root.ownerDocument.createTreeWalker(root, 4);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.data.indexOf(w);
      if (at < 0) continue;
      const x = (i: number) => {
        const range = root.ownerDocument.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        return range.getBoundingClientRect().left;
      };
      return x(at) < x(at + w.length - 1);
    }
    throw new Error(`"${w}" is not in ${root.textContent}`);
  }, word);
}

maybe(
  "a subject's right-to-left override stays in the subject: the flow's priority and the story's words read left to right",
  async () => {
    const { server, browser } = consoleTest;
    const t = { ...(await server.register(['@ana', '@ben'])), ...(await server.register(['@ops'], 'auditor')) };
    const problems: string[] = [];
    const page = await browser.newPage();
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await consoleTest.signIn(page, t['@ops']);
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@ana'],
      body: { to: '@ben', subject: SUBJECT, body: 'xy' },
    });
    expect(sent.status).toBe(201);

    await page.getByTestId('flow-status').getByText('Stream: live · 1 received').waitFor();
    const what = page.getByTestId('flow').locator('tbody tr').first().locator('td').nth(4);
    expect(await what.innerText()).toBe(`@ana → @ben: “${SUBJECT}” [normal]`);
    expect(await drawnLeftToRight(what, 'normal')).toBe(true);
    expect(await drawnLeftToRight(what, '@ana')).toBe(true);

    await page
      .getByRole('button', { name: /^story/ })
      .first()
      .click();
    const story = page.getByTestId('story');
    await story.waitFor();
    const subject = story.locator('dd').nth(1);
    expect(await subject.innerText()).toBe(`“${SUBJECT}” · priority normal · 2 bytes`);
    expect(await drawnLeftToRight(subject, 'priority')).toBe(true);
    expect(await drawnLeftToRight(subject, 'bytes')).toBe(true);
    expect(problems).toEqual([]);
  },
  60_000,
);

maybe(
  "an override in a refused field's name or a task's reason shows as <U+202E>: the server's words after it read left to right",
  async () => {
    const { server, browser } = consoleTest;
    const t = { ...(await server.register(['@cat', '@dan'])), ...(await server.register(['@ops2'], 'auditor')) };
    const before = await server.eventCount();
    const bad = await server.call('POST', '/v1/messages', {
      token: t['@cat'],
      body: { to: '@dan', subject: 's', body: 'x', ['odd\u202Efield']: 1 },
    });
    expect([bad.status, bad.body.code]).toEqual([400, 'UNKNOWN_FIELD']);
    expect(await server.eventCount()).toBe(before);

    const problems: string[] = [];
    const page = await browser.newPage();
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await consoleTest.signIn(page, t['@ops2']);
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();
    const task = await server.call('POST', '/v1/messages', {
      token: t['@cat'],
      body: { to: '@dan', subject: 'do it', body: 'x', task: {} },
    });
    expect(task.status).toBe(201);
    const declined = await server.call('POST', `/v1/tasks/${task.body.messageId}/transition`, {
      token: t['@dan'],
      body: { to: 'Rejected', reason: 'busy \u202Etoday', note: 'ask later' },
    });
    expect(declined.status).toBe(200);
    const row = page.getByTestId('flow').locator('tr[data-type="TaskStateChanged"]').first();
    await row.waitFor();
    const what = row.locator('td').nth(4);
    expect(await what.innerText()).toBe('task Submitted -> Rejected (reason: busy <U+202E>today; note: ask later)');
    expect(await drawnLeftToRight(what, 'note')).toBe(true);

    await row.getByRole('button', { name: /^story/ }).click();
    const change = page.getByTestId('task-history').locator('tbody tr').first().locator('td').nth(3);
    await change.waitFor();
    expect(await change.innerText()).toContain('(reason: "busy \\u202etoday"; note: "ask later")'); // the server's own escape
    expect(await drawnLeftToRight(change, 'note')).toBe(true);

    await page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name: 'Rejections', exact: true }).click();
    const refusal = page.getByRole('row').filter({ hasText: 'UNKNOWN_FIELD' }).filter({ hasText: '@cat' });
    await refusal.waitFor();
    const told = refusal.locator('td').nth(6);
    expect(await told.innerText()).toContain("add_message does not accept 'odd<U+202E>field'; allowed fields: ");
    expect(await drawnLeftToRight(told, 'allowed')).toBe(true);
    expect(await refusal.locator('td').nth(4).innerText()).toBe('field: odd<U+202E>field');
    expect(problems).toEqual([]);
  },
  60_000,
);
