/**
 * The live flow's row for a send that opens a task, in a real browser (Debian's chromium driven by playwright-core, as
 * console.e2e; skipped, saying so, only when it is absent). It read as a plain message, "@ana → @ben: “review” [normal]",
 * so an operator watching for work handed out could not tell it from a note; the claim that followed was the first
 * sign of a task. Now the send's row says it opens a task and in which state.
 */
import { useConsoleBrowser } from '../support/chromium';

const consoleTest = useConsoleBrowser('consoleFlowTask.e2e');
const { maybe } = consoleTest;

maybe(
  'a send that opens a task says so in the flow; a plain send does not',
  async () => {
    const { server } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const page = await consoleTest.openLive(server.adminToken);

    const send = (body: object) => server.call('POST', '/v1/messages', { token: t['@ana'], body });
    expect((await send({ to: '@ben', subject: 'review', body: 'x', task: { state: 'working' } })).status).toBe(201);
    expect((await send({ to: 'AGENT:*', subject: 'triage', body: 'x', task: {} })).status).toBe(201);
    expect((await send({ to: '@cat', subject: 'a note', body: 'x' })).status).toBe(201);

    const sent = page.getByTestId('flow').locator('tr[data-type="MessageSent"] td.what');
    await sent.filter({ hasText: 'a note' }).waitFor();
    expect(await sent.allInnerTexts()).toEqual([
      '@ana → @cat: “a note” [normal]',
      '@ana → AGENT:* (audience 2): “triage” [normal] · opens a task (Submitted)',
      '@ana → @ben: “review” [normal] · opens a task (Working)',
    ]);
  },
  60_000,
);
