/**
 * A message an agent sends to itself (@a to @a, or @a in its own list) was accepted without a word: delivered to its
 * own inbox as to any recipient, so an agent that meant another (a copied identity, its own name in a reply's `to`)
 * learned nothing of the mistake, and the one it meant waited. DESIGN.md and the seeds say nothing of it (the
 * broadcast leaves its sender out). Still delivered as sent (a note to oneself is a use); the send now says so,
 * SELF_ADDRESSED, naming the identity. Three agents.
 */
import { allEvents, registerAgents } from '../support/fixtures';
import { mailboxHarness, STORE_KINDS } from './coreHarness';

describe.each(STORE_KINDS.slice(0, 1))('a message to its own sender ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('@a to @a is delivered to @a and said so; in a list too; to others or to AGENT:* nothing is said', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    // In the library's words (HTTP and MCP name list_agents and GET /v1/agents there).
    const warning = {
      code: 'SELF_ADDRESSED',
      identity: '@a',
      message:
        'You sent this message to yourself (@a): it is in your own inbox, as any recipient gets it. If you meant ' +
        'another agent, send it again to its identity (listAgents() names them).',
    };
    const alone = await a.send({ to: '@a', subject: 'note', body: 'x' });
    expect({ recipients: alone.recipients, warnings: alone.warnings }).toEqual({ recipients: ['@a'], warnings: [warning] });
    const listed = await a.send({ to: ['@b', '@a'], subject: 'both', body: 'x' });
    expect({ recipients: listed.recipients, warnings: listed.warnings }).toEqual({
      recipients: ['@b', '@a'],
      warnings: [warning],
    });
    expect((await allEvents(mailbox)).filter((e) => e.type === 'MessageSent')).toHaveLength(2);
    // Delivered as sent: in @a's inbox, and the listed one in @b's; @c got nothing.
    expect((await a.listMessages({})).messages.map((m) => m.subject)).toEqual(['both', 'note']);
    expect((await b.listMessages({})).messages.map((m) => m.subject)).toEqual(['both']);
    expect((await c.listMessages({})).messages).toEqual([]);
    // To others, or to everyone (the broadcast leaves its sender out): nothing said.
    for (const to of ['@b', ['@b', '@c'], 'AGENT:*'])
      expect((await a.send({ to, subject: 's', body: 'x' })).warnings).toBeUndefined();
  });
});
