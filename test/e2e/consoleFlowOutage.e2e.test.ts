/**
 * The live flow across a server outage before its first entry, in a real browser (Debian's chromium driven by
 * playwright-core, as console.e2e; skipped, saying so, only when it is absent). With the server stopped the flow kept
 * saying "No event written since this flow opened at log position N", which it cannot know while its stream is down;
 * and a send made while it was down never showed: the stream resumes after the last entry it saw, and having seen none
 * it started again at the new head, past the send. Now, while the stream is not live, the note says what it received,
 * not what was written, and a stream that saw no entry resumes where it opened, so the send shows once the server is back.
 */
import type { HttpServer } from '../../src/adapters/http/httpServer';
import { buildApiServer } from '../../src/server';
import { useConsoleBrowser } from '../support/chromium';
import { silentLogger } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

const consoleTest = useConsoleBrowser('consoleFlowOutage.e2e');
const { maybe } = consoleTest;

let again: HttpServer | undefined;
consoleTest.closing(() => again?.close());

maybe(
  'while the stream is down the flow claims nothing of the log, and what was written meanwhile shows once it is back',
  async () => {
    const { server, browser } = consoleTest;
    const t = await server.register(['@ana', '@ben', '@cat']);
    const head = (await server.call('GET', '/readyz')).body.eventStore.head as string;
    const port = Number(new URL(server.url).port);

    const page = await browser.newPage();
    await consoleTest.signIn(page, server.adminToken);
    const status = page.getByTestId('flow-status');
    const empty = page.getByTestId('flow-empty');
    await status.getByText('Stream: live').waitFor();
    await empty.getByText(`No event written since this flow opened at log position ${head}`).waitFor();

    // Stopped as by a crash: the listener closed and every open connection cut (the flow's stream with them).
    const closed = server.http.close();
    await waitFor(() => !server.http.app.server.listening, { what: 'the listener closed' });
    server.http.app.server.closeAllConnections();
    await closed;
    await status.getByText('Stream: retrying').waitFor({ timeout: 10_000 });
    expect(await empty.innerText()).toBe(
      `No event received since this flow opened at log position ${head}; its stream is not live now: events written ` +
        "meanwhile show once it is back. Earlier ones: a message's story (Message story), or GET /v1/audit/events.",
    );

    // Written while the flow cannot hear of it (the mailbox itself goes on: only its HTTP listener stopped).
    const ana = await server.mailbox.as(t['@ana']);
    await ana.send({ to: '@ben', subject: 'while away', body: 'x' });
    await ana.send({ to: '@cat', subject: 'also while away', body: 'x' });

    again = buildApiServer(server.mailbox, silentLogger);
    await again.listen('127.0.0.1', port);
    await status.getByText('Stream: live').waitFor({ timeout: 10_000 });
    const flow = page.getByTestId('flow');
    await flow.getByText('“also while away”').waitFor();
    expect(await flow.getByText('“while away”').count()).toBe(1);
    expect(await empty.count()).toBe(0);
  },
  90_000,
);
