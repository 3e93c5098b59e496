import { allEvents, memoryMailbox, registerAgents } from '../support/fixtures';

test('smoke: broadcast reaches B and C, not A', async () => {
  const mailbox = await memoryMailbox();
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const sent = await a.send({ to: 'AGENT:*', subject: 'hi', body: 'hello all' });
  expect(sent.recipients.sort()).toEqual(['@b', '@c']);
  expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([sent.messageId]);
  expect((await a.listMessages({ status: 'unread' })).messages).toEqual([]);
  await b.markRead({ messageId: sent.messageId });
  expect((await c.unreadCount()).unread).toBe(1);
  expect((await b.unreadCount()).unread).toBe(0);
  expect((await allEvents(mailbox)).map((e) => e.type)).toEqual([
    'AgentRegistered',
    'AgentRegistered',
    'AgentRegistered',
    'MessageSent',
    'BroadcastDelivered',
    'BroadcastDelivered',
    'ReceiptRead',
    'MessagesSeen', // B's listing returned it: seen (written after the listing, issue 13)
  ]);
  await mailbox.close();
});
