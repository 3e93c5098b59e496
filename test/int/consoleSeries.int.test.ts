/**
 * The console's "Unread messages (all agents)" chart (GET /v1/audit/series, sampled by ConsoleSeries). It summed the
 * unread of every identity the views know, so a message to a name no agent holds (sent with the UNREGISTERED_RECIPIENT
 * warning) counted as an agent's unread mail: the chart said 3 where the agents table, read on the same page, summed
 * to 2. Now the chart counts the agents' unread, as the agents table does.
 */
import type { MailboxMetrics } from '../../src/adapters/http/metrics';
import { ConsoleSeries } from '../../src/adapters/http/consoleSeries';
import { memoryMailbox, registerAgents } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

test('the unread chart counts the mail of registered agents only, as the agents table does', async () => {
  const mailbox = await memoryMailbox();
  try {
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: ['@b', '@c'], subject: 'review', body: 'x' });
    const toNobody = await a.send({ to: '@nobody', subject: 'lost', body: 'x' });
    expect(toNobody.warnings).toEqual([expect.objectContaining({ code: 'UNREGISTERED_RECIPIENT' })]);
    const unreadOf = async () =>
      Object.fromEntries((await mailbox.projections.allHeartbeats()).map((h) => [h.identity, h.unread]));
    await waitFor(async () => (await unreadOf())['@nobody'] === 1, { what: 'the send to @nobody in the views' });

    const agents = await mailbox.projections.listAgents();
    const unread = await unreadOf();
    const tableSum = agents.reduce((sum, agent) => sum + (unread[agent.identity] ?? 0), 0);
    expect(tableSum).toBe(2);
    const noMetrics = { registry: { getSingleMetric: () => undefined } } as unknown as MailboxMetrics;
    expect((await new ConsoleSeries(mailbox, noMetrics).sample()).unread).toBe(tableSum);
  } finally {
    await mailbox.close();
  }
});
