/** Acceptance (issue 2): recipient shapes through the library API, on both embedded stores; rejections write nothing. */
import { registerAgents } from '../support/fixtures';
import { eventsOfType, expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

const REJECTED = ['AGENT:gpt', 'BROADCAST:*', 'neo-gpt', '@', '@a b', 'agent:*', `@${'n'.repeat(65)}`];

describe.each(STORE_KINDS)('recipient shapes ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it.each(REJECTED)('%j -> INVALID_RECIPIENT_SHAPE (400), zero events written', async (to) => {
    const mailbox = await harness.open();
    const { '@sender': sender } = await registerAgents(mailbox, ['@sender', '@neo-gpt']);
    const error = await expectRejectedWithoutEvents(mailbox, 'INVALID_RECIPIENT_SHAPE', () =>
      sender.send({ to, subject: 'hi', body: 'hello' }),
    );
    expect(error.status).toBe(400);
    expect(error.envelope).toMatchObject({ error: 'Invalid recipient shape', to });
    expect(error.envelope.valid_shapes).toHaveLength(2);
  });

  it('AGENT:gpt is not rewritten to @neo-gpt, but the error suggests it', async () => {
    const mailbox = await harness.open();
    const { '@sender': sender, '@neo-gpt': neo } = await registerAgents(mailbox, ['@sender', '@neo-gpt']);
    const error = await expectRejectedWithoutEvents(mailbox, 'INVALID_RECIPIENT_SHAPE', () =>
      sender.send({ to: 'AGENT:gpt', subject: 'hi', body: 'hello' }),
    );
    expect(error.envelope.suggestions).toEqual(['@neo-gpt']);
    expect((await neo.unreadCount()).unread).toBe(0);
  });

  it('@neo-gpt, @other-client-agent-foo_42 and AGENT:* are accepted and delivered', async () => {
    const mailbox = await harness.open();
    const agents = await registerAgents(mailbox, ['@sender', '@neo-gpt', '@other-client-agent-foo_42']);
    const sender = agents['@sender'];
    const direct1 = await sender.send({ to: '@neo-gpt', subject: 'one', body: 'b' });
    const direct2 = await sender.send({ to: '@other-client-agent-foo_42', subject: 'two', body: 'b' });
    const broadcast = await sender.send({ to: 'AGENT:*', subject: 'all', body: 'b' });
    expect(direct1).toMatchObject({ status: 'sent', to: '@neo-gpt', recipients: ['@neo-gpt'] });
    expect(direct2).toMatchObject({
      status: 'sent',
      to: '@other-client-agent-foo_42',
      recipients: ['@other-client-agent-foo_42'],
    });
    expect(broadcast.recipients.sort()).toEqual(['@neo-gpt', '@other-client-agent-foo_42']);
    expect((await eventsOfType(mailbox, 'MessageSent')).map((e) => e.data.messageId)).toEqual([
      direct1.messageId,
      direct2.messageId,
      broadcast.messageId,
    ]);
    const neoInbox = await agents['@neo-gpt'].listMessages({ status: 'unread' });
    expect(neoInbox.messages.map((m) => m.messageId)).toEqual([broadcast.messageId, direct1.messageId]);
    const otherInbox = await agents['@other-client-agent-foo_42'].listMessages({ status: 'unread' });
    expect(otherInbox.messages.map((m) => m.messageId)).toEqual([broadcast.messageId, direct2.messageId]);
  });

  it('permissive by default: an unregistered well-shaped identity is accepted with a warning and suggestions', async () => {
    const mailbox = await harness.open();
    const { '@sender': sender } = await registerAgents(mailbox, ['@sender', '@neo-gpt']);
    const sent = await sender.send({ to: '@neo-gtp', subject: 'hi', body: 'hello' });
    expect(sent.recipients).toEqual(['@neo-gtp']);
    expect(sent.warnings).toEqual([expect.objectContaining({ code: 'UNREGISTERED_RECIPIENT', suggestions: ['@neo-gpt'] })]);
  });

  it('strictRecipients: an unregistered identity -> UNKNOWN_RECIPIENT (404) with suggestions, zero events', async () => {
    const mailbox = await harness.open({ strictRecipients: true });
    const { '@sender': sender } = await registerAgents(mailbox, ['@sender', '@neo-gpt']);
    const error = await expectRejectedWithoutEvents(mailbox, 'UNKNOWN_RECIPIENT', () =>
      sender.send({ to: '@neo-gtp', subject: 'hi', body: 'hello' }),
    );
    expect(error.status).toBe(404);
    expect(error.envelope.suggestions).toEqual(['@neo-gpt']);
    await expect(sender.send({ to: '@neo-gpt', subject: 'hi', body: 'hello' })).resolves.toMatchObject({ status: 'sent' });
  });
});
