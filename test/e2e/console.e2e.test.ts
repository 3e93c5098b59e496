/**
 * The operator console at /console in a real browser (issue 16): Debian's
 * chromium driven by playwright-core (no browser download), one browser for
 * the file. Sign in, watch three agents' mail arrive in the live flow, filter
 * it, open a story, see a rejection, compare the agents table with
 * /v1/heartbeat, retire an agent after confirming; an auditor sees no admin
 * action, an agent's or a wrong token is refused. Every panel passes axe-core
 * (no serious or critical violation), breaks no rule of the CSP, loads nothing
 * from elsewhere, and is saved as a screenshot under test-artifacts/console/.
 * Skipped, saying so, only when chromium is absent.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { TestServer } from '../support/httpServer';
import { useConsoleBrowser } from '../support/chromium';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

/** The wake SLA (MAILBOX_WAKE_SLA_MS), small: a message to an agent with no wake stream is unwoken after this long. */
const WAKE_SLA_MS = 300;
const consoleTest = useConsoleBrowser('console.e2e', { wakeSlaMs: WAKE_SLA_MS });
const { maybe } = consoleTest;
const ARTIFACTS = path.resolve(process.env.MAILBOX_TEST_ARTIFACTS ?? 'test-artifacts', 'console');
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

let server: TestServer;
let t: Record<string, string>;
const problems: string[] = [];
const outside: string[] = [];
const urls: string[] = [];
const streams: WakeSubscriber[] = [];
consoleTest.closing(() => {
  for (const stream of streams) stream.close();
});

beforeAll(async () => {
  server = consoleTest.server;
  t = { ...(await server.register(['@ana', '@ben', '@cat', '@dan'])), ...(await server.register(['@ops'], 'auditor')) };
  fs.mkdirSync(ARTIFACTS, { recursive: true });
});

test('/console is the built page under a strict CSP; its assets are served from this server only', async () => {
  const page = await server.call('GET', '/console');
  expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("connect-src 'self'");
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  expect(page.body).not.toMatch(/https?:\/\//);
  expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
  const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page.body)![1];
  const asset = await server.call('GET', script);
  expect([asset.status, asset.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
  for (const bad of ['/console/assets/..%2F..%2Fpackage.json', '/console/assets/index.html', '/console/assets/nothing.js']) {
    const refused = await server.call('GET', bad);
    expect([bad, refused.status, refused.body.code]).toEqual([bad, 404, 'NOT_FOUND']);
  }
});

async function newPage(): Promise<Page> {
  const page = await (await consoleTest.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('request', (request) => {
    urls.push(request.url());
    if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) outside.push(request.url());
  });
  // The one error the browser may log: the 401 of the sign-in with a wrong token, which the test itself provokes.
  page.on(
    'console',
    (message) => message.type() === 'error' && !/status of 401/.test(message.text()) && problems.push(message.text()),
  );
  page.on('pageerror', (error) => problems.push(error.message));
  return page;
}

const panel = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Panels' }).getByRole('button', { name, exact: true }).click();

/** axe-core in the page (evaluated, so the CSP needs no exception), then a screenshot for a person to look at. */
async function checkPanel(page: Page, name: string): Promise<void> {
  await page.evaluate(AXE);
  const violations: Array<{ id: string; impact: string; nodes: unknown[] }> = await page.evaluate(async () => {
    const axe = (globalThis as any).axe as {
      run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }>;
    };
    return (await axe.run()).violations.map(({ id, impact, nodes }) => ({ id, impact, nodes: nodes.slice(0, 2) }));
  });
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const send = (from: string, body: Record<string, unknown>) => server.call('POST', '/v1/messages', { token: t[from], body });

/** Asks the API until `done` holds for a ledger (wakes and seen marks are written in batches, then projected). */
async function ledgerUntil(id: string, done: (ledger: any) => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    await server.mailbox.wakeRecorder.flush();
    await server.mailbox.seenMarks.flush();
    const { body } = await server.call('GET', `/v1/messages/${id}/delivery`, { token: t['@ops'] });
    if (done(body)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the ledger of ${id} never got there`);
}

maybe(
  'an admin signs in, watches the flow, filters it, reads a story and a rejection, checks the agents and retires one',
  async () => {
    const page = await newPage();
    await consoleTest.signIn(page, 'not-a-token');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Refused');
    await consoleTest.signIn(page, t['@ana']);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('agent @ana');
    await consoleTest.signIn(page, server.adminToken);
    await expect(page.getByTestId('who').textContent()).resolves.toContain('admin');
    // The token lives in this tab's session storage only: not in local storage, a cookie or the URL.
    const held = await page.evaluate(
      // A string, evaluated in the page (this file is type-checked without the DOM's names).
      '({ session: Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k)), local: localStorage.length, cookie: document.cookie, url: location.href })',
    );
    expect(held).toEqual({ session: [server.adminToken], local: 0, cookie: '', url: `${server.url}/console` });
    await page.getByTestId('flow-status').getByText('Stream: live').waitFor();

    // Three agents send; each row is in view within a second of the send's answer.
    const flow = page.getByTestId('flow');
    const sent: Record<string, string> = {};
    for (const [from, to] of [
      ['@ana', '@ben'],
      ['@ben', '@cat'],
      ['@cat', 'AGENT:*'],
    ]) {
      const { body } = await send(from, { to, subject: `from ${from}`, body: 'hello' });
      sent[from] = body.messageId;
      await flow.getByText(`“from ${from}”`).waitFor({ timeout: 1000 });
    }
    await flow.getByText('delivered to @dan (broadcast from @cat)').waitFor();
    await expect(flow.getByText('(audience 3)').count()).resolves.toBe(1); // @ana, @ben, @dan: not the sender, not the auditor
    await checkPanel(page, '1-live-flow');

    // A task's claim and changes show in the flow in words, and its story tells the task's history.
    const { body: task } = await send('@ana', { to: 'AGENT:*', subject: 'a task', body: 'x', task: {} });
    await server.call('POST', `/v1/tasks/${task.messageId}/claim`, { token: t['@ben'] });
    for (const to of ['Working', 'Completed'])
      await server.call('POST', `/v1/tasks/${task.messageId}/transition`, { token: t['@ben'], body: { to } });
    await flow.getByText('task claimed by @ben').waitFor({ timeout: 1000 });
    await flow.getByText('task Working -> Completed').waitFor({ timeout: 1000 });
    await page.screenshot({ path: path.join(ARTIFACTS, '1b-live-flow-tasks.png') });
    await panel(page, 'Message story');
    await page.getByLabel('Message id').fill(task.messageId);
    await page.getByRole('button', { name: 'Show story' }).click();
    const history = page.getByTestId('task-history');
    await history.waitFor();
    await expect(history.locator('tbody tr').allInnerTexts()).resolves.toEqual([
      expect.stringMatching(/@ben\s+task \S+ claimed by @ben/),
      expect.stringMatching(/@ben\s+task \S+ Submitted -> Working by @ben/),
      expect.stringMatching(/@ben\s+task \S+ Working -> Completed by @ben/),
    ]);
    await checkPanel(page, '3b-task-story');
    await panel(page, 'Live flow');

    // Filter by agent: only what concerns @ana.
    await page.getByLabel('Agent', { exact: true }).fill('@ana');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    // The filtered stream's own 'live' (the unfiltered one said live too, with rows received): it reads from the head on.
    await page.getByTestId('flow-status').getByText('Stream: live · 0 received').waitFor();
    await send('@ben', { to: '@cat', subject: 'not about ana', body: 'x' });
    await send('@ben', { to: '@ana', subject: 'for ana', body: 'x' });
    await flow.getByText('“for ana”').waitFor({ timeout: 1000 });
    await expect(flow.getByText('not about ana').count()).resolves.toBe(0);
    await expect(flow.locator('tbody tr').count()).resolves.toBe(1);

    // A story: @ben reads @cat's broadcast; each recipient's state shows.
    await server.call('POST', `/v1/messages/${sent['@cat']}/read`, { token: t['@ben'] });
    await panel(page, 'Message story');
    await page.getByLabel('Message id').fill(sent['@cat']);
    await page.getByRole('button', { name: 'Show story' }).click();
    await page.getByTestId('story').getByText('by @cat to AGENT:*').waitFor(); // this message's story, not the task's before it
    const recipients = page.getByTestId('recipients');
    const rows = await recipients.locator('tbody tr').allInnerTexts();
    const byRecipient = Object.fromEntries(rows.map((row) => [row.split('\t')[0], row.includes('unread') ? 'unread' : 'read']));
    expect(byRecipient).toEqual({ '@ana': 'unread', '@ben': 'read', '@dan': 'unread' });
    await expect(page.getByTestId('task-history').count()).resolves.toBe(0); // no task in this message

    // Its delivery ledger: the counts over all three, paged two at a time.
    const ledger = page.getByTestId('ledger');
    await ledger.getByText('3 recipient(s): 3 in view · 0 woken · 0 seen · 1 read · 0 replied').waitFor();
    await ledger.getByLabel('Per page').selectOption('2');
    const ledgerRows = ledger.getByTestId('ledger-rows').locator('tbody tr');
    // "page 1" was already shown at 100 per page: the signal that the 2-per-page answer is drawn is its third row gone.
    await ledgerRows.nth(2).waitFor({ state: 'detached' });
    await ledger.getByTestId('ledger-page').getByText('page 1').waitFor();
    await expect(ledgerRows.allInnerTexts().then((rows) => rows.map((row) => row.split('\t')[0]))).resolves.toEqual([
      '@ana',
      '@ben',
    ]);
    await checkPanel(page, '3b-message-story-broadcast-ledger');
    await ledger.getByRole('button', { name: 'Next recipients' }).click();
    await ledger.getByTestId('ledger-page').getByText('page 2 (last)').waitFor();
    await expect(ledgerRows.allInnerTexts()).resolves.toEqual([expect.stringMatching(/^@dan\t#\d+\t#\d+\tnot woken\t–\t–\t–$/)]);
    await expect(ledger.getByRole('button', { name: 'Next recipients' }).isDisabled()).resolves.toBe(true);
    await ledger.getByRole('button', { name: 'Previous recipients' }).click();
    await ledger.getByTestId('ledger-page').getByText('page 1').waitFor();

    // A DM to @ben, who has a wake stream open: woken via the stream, then seen (listed), read and replied.
    const ben = await subscribe(server.url, t['@ben']);
    streams.push(ben);
    await ben.next((e) => e.event === 'sync');
    const dm = (await send('@ana', { to: '@ben', subject: 'ledger', body: 'x' })).body.messageId as string;
    await ben.next((e) => e.event === 'wake' && e.data.messageId === dm);
    await server.call('GET', '/v1/messages', { token: t['@ben'] });
    await server.call('POST', `/v1/messages/${dm}/read`, { token: t['@ben'] });
    await send('@ben', { to: '@ana', subject: 're: ledger', body: 'x', inReplyTo: dm });
    await ledgerUntil(dm, (l) => l.summary.woken + l.summary.seen + l.summary.read + l.summary.replied === 4);
    await page.getByLabel('Message id').fill(dm);
    await page.getByRole('button', { name: 'Show story' }).click();
    await ledger.getByText('1 recipient(s): 1 in view · 1 woken · 1 seen · 1 read · 1 replied').waitFor();
    const [benRow] = await ledgerRows.allInnerTexts();
    // Each stage as a table cell says when: how long ago (the exact instant in its tooltip).
    const ago = '(now|\\d+ s ago)';
    expect(benRow).toMatch(new RegExp(`^@ben\\t#\\d+\\t#\\d+\\t${ago} via stream\\t${ago}\\t${ago}\\t${ago}$`));
    await checkPanel(page, '3-message-story');

    // A rejected send appears under Rejections with its code.
    await send('@dan', { to: 'AGENT:ana', subject: 'x', body: 'x' });
    await panel(page, 'Rejections');
    const rejections = page.getByTestId('rejections');
    await rejections.getByText('INVALID_RECIPIENT_SHAPE').waitFor({ timeout: 3000 });
    await expect(rejections.locator('tbody tr').first().innerText()).resolves.toMatch(
      /@dan.*send \(http\).*INVALID_RECIPIENT_SHAPE.*AGENT:ana/s,
    );
    await checkPanel(page, '4-rejections');

    // A heartbeat nudge delivered to @cat (recorded as the heartbeat records it: a WakeObserved via its target).
    server.mailbox.wakeRecorder.observed(sent['@ben'], '@cat', 'webhook');
    await server.mailbox.wakeRecorder.flush();
    let nudged: any;
    for (let attempt = 0; attempt < 200 && !nudged; attempt++) {
      const { body } = await server.call('GET', '/v1/audit/agents', { token: t['@ops'] });
      nudged = body.agents.find((a: any) => a.identity === '@cat' && a.lastNudge);
      if (!nudged) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(nudged.lastNudge).toEqual({ at: expect.any(String), via: 'webhook' });

    // The agents table says what /v1/heartbeat says, and shows the last nudge where one happened (a dash elsewhere).
    await panel(page, 'Agents');
    const table = page.getByTestId('agents');
    await table.getByRole('cell', { name: '@dan', exact: true }).waitFor();
    const heartbeat = (await server.call('GET', '/v1/heartbeat', { token: server.adminToken })).body.agents;
    const shown = (await table.locator('tbody tr').allInnerTexts()).map((row) => row.split('\t'));
    expect(shown.map(([identity, , unread]) => [identity, Number(unread)]).sort()).toEqual(
      heartbeat.map((h: any) => [h.identity, h.unreadCount]).sort(),
    );
    const nudges = Object.fromEntries(shown.map((row) => [row[0], row[6]]));
    expect(nudges).toEqual({
      '@ana': '–',
      '@ben': '–',
      '@cat': expect.stringMatching(/^(now|\d+ s ago) via webhook$/), // a moment ago: said so (its instant in the tooltip)
      '@dan': '–',
      '@ops': '–',
    });
    await table.getByRole('button', { name: 'Last nudge' }).click();
    await expect(table.locator('tbody tr').first().innerText()).resolves.toMatch(/^@cat\t/);
    await table.getByRole('button', { name: 'Last nudge' }).click(); // descending: newest first, and "never" still last
    await expect(table.locator('tbody tr').first().innerText()).resolves.toMatch(/^@cat\t/);
    await checkPanel(page, '2-agents');

    // Retire @dan: nothing happens until the admin confirms.
    const before = await server.eventCount();
    const head = await server.mailbox.eventStore.headPosition();
    await page.getByRole('button', { name: 'Retire @dan' }).click();
    const dialog = page.getByTestId('confirm');
    await dialog.getByText("@dan's token stops working at once").waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, '2b-agents-confirm-retire.png') });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Retire @dan' }).click();
    await dialog.getByRole('button', { name: 'Retire @dan' }).click();
    await page.getByTestId('notice').getByText('@dan retired').waitFor();
    // When, as the console says times (it said the server's UTC ISO, "retired at 2026-12-03T22:08:21.123Z.").
    expect(await page.getByTestId('notice').innerText()).toMatch(/^@dan retired at \d\d:\d\d:\d\d \((now|\d+ s ago)\)\.$/);
    expect(await page.getByTestId('notice').locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(await server.eventCount()).toBe(before + 1);
    const agents = (await server.call('GET', '/v1/agents', { token: t['@ana'] })).body.agents;
    expect(agents.find((a: any) => a.identity === '@dan')).toMatchObject({ retired: true });
    const { events } = (await server.call('GET', `/v1/audit/events?after=${head}`, { token: server.adminToken })).body;
    expect(events.map((e: any) => [e.type, e.metadata.actor])).toEqual([['AgentRetired', 'admin']]);

    // Register an agent and issue it a new token, each after a confirmation: the old token is refused, the new one works.
    await page.getByLabel('New identity').fill('@eve');
    await page.getByRole('button', { name: 'Register…' }).click();
    await dialog.getByRole('button', { name: 'Register @eve' }).click();
    const issued = page.getByTestId('notice').locator('code.token');
    await page.getByTestId('notice').getByText('@eve registered').waitFor();
    const first = (await issued.textContent())!;
    await table.getByRole('cell', { name: '@eve', exact: true }).waitFor();
    await page.getByRole('button', { name: 'New token for @eve' }).click();
    await dialog.getByRole('button', { name: 'Issue new token' }).click();
    await page.getByTestId('notice').getByText('New token for @eve').waitFor();
    const second = (await issued.textContent())!;
    expect(second).not.toBe(first);
    await expect(server.call('GET', '/v1/whoami', { token: first }).then((r) => r.status)).resolves.toBe(401);
    await expect(server.call('GET', '/v1/whoami', { token: second }).then((r) => r.body)).resolves.toEqual({
      identity: '@eve',
      role: 'agent',
      limits: { maxBodyBytes: 65536 },
    });
    const registry = (await server.call('GET', `/v1/audit/events?after=${head}`, { token: server.adminToken })).body.events;
    expect(registry.map((e: any) => [e.type, e.metadata.actor])).toEqual([
      ['AgentRetired', 'admin'],
      ['AgentRegistered', 'admin'],
      ['AgentTokenRotated', 'admin'],
    ]);

    // The unwoken alarm: @cat's broadcast woke nobody within the SLA, and only @ben read it; its story is a click away. The
    // sends to @ben and @cat before it woke nobody either, but their recipients have since seen them (they listed their
    // inboxes): they need no wake, so they are no alarm.
    await panel(page, 'Health');
    await page.getByTestId('health').getByText('Event store').waitFor();
    const unwoken = page.getByTestId('unwoken');
    const alarm = (await server.call('GET', '/v1/audit/unwoken', { token: t['@ops'] })).body;
    expect(alarm).toMatchObject({ slaMs: WAKE_SLA_MS, count: expect.any(Number) });
    expect(alarm.messages[0]).toMatchObject({ messageId: sent['@cat'], sender: '@cat', recipientCount: 3, escalatedAt: null });
    expect(alarm.messages.map((m: any) => m.messageId)).not.toContain(dm); // woken: no alarm
    expect(alarm.messages.map((m: any) => m.messageId)).not.toContain(sent['@ana']); // seen by its recipient: no alarm
    await unwoken.getByText(/\d+ messages? woke none of (its|their) recipients within 0.3 s/).waitFor();
    await expect(unwoken.locator('tbody tr').first().innerText()).resolves.toMatch(/@cat\t3\tnot yet\tstory/);
    await checkPanel(page, '5-health');
    await unwoken.getByRole('button', { name: `story of message ${sent['@cat']}` }).click();
    await ledger.getByText('3 recipient(s): 3 in view · 0 woken').waitFor();
    await expect(ledgerRows.first().innerText()).resolves.toContain('@ana');
    await panel(page, 'Charts');
    await page.getByTestId('charts').locator('canvas').first().waitFor();
    await checkPanel(page, '6-charts');
    await panel(page, 'Live flow');
  },
  90_000,
);

maybe(
  'an auditor reads every panel but is offered no admin action',
  async () => {
    const page = await newPage();
    await consoleTest.signIn(page, t['@ops']);
    await expect(page.getByTestId('who').textContent()).resolves.toContain('auditor @ops (read only)');
    await panel(page, 'Agents');
    await page.getByTestId('agents').getByRole('cell', { name: '@ana', exact: true }).waitFor();
    await expect(page.getByRole('button', { name: /^(Retire @|New token|Register)/ }).count()).resolves.toBe(0);
    await expect(page.getByRole('columnheader', { name: 'Actions' }).count()).resolves.toBe(0);
    await checkPanel(page, '7-agents-as-auditor');
  },
  60_000,
);

test('the page broke no rule of its CSP, asked nothing of another origin, and put no token in a URL', () => {
  expect(problems).toEqual([]);
  expect(outside).toEqual([]);
  for (const token of Object.values(t).concat(server.adminToken)) expect(urls.filter((url) => url.includes(token))).toEqual([]);
});
