/**
 * Calls under way when mailbox.close() begins are answered by the time close() resolves. A send whose events were
 * appended waited for the views to show them (awaitProjectionMs) after close() had stopped the projector, on a timer
 * that keeps no process alive: its promise stayed pending for the whole wait (here 60 s), and a script whose last step
 * awaited it ended with the promise never settled (Node exits 13, "unsettled top-level await"). Three agents: a
 * broadcast's receipts are the ones each reads after a reopen.
 */
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents, silentLogger, tempDir } from '../support/fixtures';

test('sends under way when close() begins have each settled once it resolves; those that resolved are in the log', async () => {
  const dataDir = tempDir('close-under-way-');
  const config = { dataDir, adminToken: ADMIN_TOKEN, awaitProjectionMs: 60_000 };
  const mailbox = await createMailbox(config, { logger: silentLogger });
  const agents = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const { '@a': a, '@b': b } = agents;
  await b.listMessages(); // opened before: b's inbox is read again after the reopen
  const outcomes: string[] = [];
  const sends = Array.from({ length: 20 }, (_, i) =>
    a.send({ to: 'AGENT:*', subject: `late ${i}`, body: 'x' }).then(
      () => outcomes.push(`sent late ${i}`),
      (error: { code?: string }) => outcomes.push(`refused ${error.code}`),
    ),
  );
  await mailbox.close();
  await new Promise((resolve) => setImmediate(resolve)); // the answers' own continuations
  expect(outcomes).toHaveLength(20);
  expect(outcomes.filter((outcome) => !/^(sent late \d+|refused UNAVAILABLE)$/.test(outcome))).toEqual([]);
  await Promise.all(sends);

  const reopened = await createMailbox(config, { logger: silentLogger });
  try {
    const sent = outcomes.filter((outcome) => outcome.startsWith('sent ')).map((outcome) => outcome.slice('sent '.length));
    for (const identity of ['@b', '@c']) {
      const reader = await reopened.as(agents[identity].token); // a token outlives the process that gave it
      const subjects = (await reader.listMessages({ limit: 200 })).messages.map((m) => m.subject);
      expect(subjects).toEqual(expect.arrayContaining(sent));
    }
  } finally {
    await reopened.close();
  }
});
