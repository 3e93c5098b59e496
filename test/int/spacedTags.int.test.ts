/**
 * tags sent as one text holding spaces and no comma ("review urgent"): a model meant two tags, got one ("review urgent")
 * and no word of it, and its filter on "review" then matched nothing. The tag is still kept as sent (a tag may hold a
 * space); the send now says so (SPACE_IN_TAG) and names the forms for several. Three agents.
 */
import { allEvents, registerAgents } from '../support/fixtures';
import { mailboxHarness, STORE_KINDS } from './coreHarness';

describe.each(STORE_KINDS.slice(0, 1))('tags with spaces ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('"review urgent" is kept as one tag and said so; a list or commas are not', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent = await a.send({ to: ['@b', '@c'], subject: 's', body: 'x', tags: 'review urgent' });
    expect(sent.warnings).toEqual([
      {
        code: 'SPACE_IN_TAG',
        message:
          'tags "review urgent" was kept as one tag, "review urgent": tags are separated by commas ("review, urgent") ' +
          'or given as a list (["review","urgent"]).',
        tag: 'review urgent',
      },
    ]);
    expect((await allEvents(mailbox)).filter((e) => e.type === 'MessageSent')).toHaveLength(1);
    // Kept as sent: one tag, for each recipient.
    for (const reader of [b, c])
      expect((await reader.listMessages({ tags: 'review urgent' })).messages.map((m) => m.tags)).toEqual([['review urgent']]);
    // Several, as the warning says: no warning.
    for (const tags of ['review, urgent', ['review', 'urgent'], ['needs review'], 'review'])
      expect((await a.send({ to: '@b', subject: 's', body: 'x', tags })).warnings).toBeUndefined();
    expect((await b.listMessages({ tags: 'urgent' })).messages).toHaveLength(2);
  });
});
