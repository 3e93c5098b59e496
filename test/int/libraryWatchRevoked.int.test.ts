/**
 * A library watch whose agent is retired or whose token is rotated. Before: the watch went on as if nothing happened
 * (a rotated token's watch kept receiving wakes; a retired agent's went quiet for good), where an HTTP wake stream ends
 * with a last `event: revoked`. Now the watch ends with a last event, `{ event: 'revoked', data: { identity, reason } }`
 * ('agent retired', 'token rotated'), once: at once when this mailbox retired or rotated it, within about a second when
 * another mailbox on the same log did; nothing reaches the listener after it, and its stop function still resolves.
 */
import path from 'node:path';
import type { WakeStreamEvent } from '../../src/application/mailboxQueries';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, allEvents, memoryMailbox, registerAgents, silentLogger, tempDir } from '../support/fixtures';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { startRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

const kinds = (events: WakeStreamEvent[]) => events.map((event) => event.event);

test("retiring a watching agent or rotating its token ends its watch with a last 'revoked' event; others go on", async () => {
  const mailbox = await memoryMailbox();
  try {
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const admin = mailbox.asActor(ADMIN_ACTOR);
    const heard: Record<string, WakeStreamEvent[]> = { '@a': [], '@b': [], '@c': [] };
    const stops = await Promise.all(
      (['@a', '@b', '@c'] as const).map((identity) =>
        ({ '@a': a, '@b': b, '@c': c })[identity].watch((event) => void heard[identity].push(event)),
      ),
    );
    await waitFor(() => Object.values(heard).every((events) => events.length === 1), { what: 'three syncs' });

    await admin.retireAgent('@b');
    expect(heard['@b']).toEqual([
      expect.objectContaining({ event: 'sync' }),
      { event: 'revoked', data: { identity: '@b', reason: 'agent retired' } },
    ]);

    await a.send({ to: '@c', subject: 'still here', body: 'x' });
    await waitFor(() => heard['@c'].length === 2, { what: "@c's wake" });
    await admin.rotateToken('@c');
    expect(kinds(heard['@c'])).toEqual(['sync', 'wake', 'revoked']);
    expect(heard['@c'][2]).toEqual({ event: 'revoked', data: { identity: '@c', reason: 'token rotated' } });

    // Nothing more reaches a revoked watch: a wake for @c after the rotation, nor the close.
    const before = (await allEvents(mailbox)).length;
    await a.send({ to: ['@c', '@a'], subject: 'after the rotation', body: 'x' });
    expect((await allEvents(mailbox)).length).toBe(before + 1);
    await waitFor(() => heard['@a'].length === 2, { what: "@a's wake" });
    expect(kinds(heard['@a'])).toEqual(['sync', 'wake']);
    for (const stop of stops.slice(1)) await expect(stop()).resolves.toBeUndefined();
    await mailbox.close();
    expect(kinds(heard['@a'])).toEqual(['sync', 'wake', 'closed']);
    expect(kinds(heard['@b'])).toEqual(['sync', 'revoked']);
    expect(kinds(heard['@c'])).toEqual(['sync', 'wake', 'revoked']);
  } finally {
    await mailbox.close();
  }
});

test("a client of asActor (no token): its agent's retirement ends its watch; a rotation does not (it holds no token)", async () => {
  const mailbox = await memoryMailbox();
  try {
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const admin = mailbox.asActor(ADMIN_ACTOR);
    const heard: WakeStreamEvent[] = [];
    await mailbox.asActor({ identity: '@b', role: 'agent' }).watch((event) => void heard.push(event));
    await admin.rotateToken('@b');
    await a.send({ to: '@b', subject: 'after the rotation', body: 'x' });
    await waitFor(() => heard.length === 2, { what: "@b's wake" });
    await admin.retireAgent('@b');
    expect(kinds(heard)).toEqual(['sync', 'wake', 'revoked']);
    expect(heard[2]).toEqual({ event: 'revoked', data: { identity: '@b', reason: 'agent retired' } });
  } finally {
    await mailbox.close();
  }
});

// An identity never registered: its watch opened, said `sync` with nothing unread, and stayed open without a word for
// good (no wake is ever due to an identity no one registered), where a retired one ends with 'revoked'. Now watch
// refuses it at once, AGENT_NOT_FOUND, naming the registered identity it is near ('alice' for '@alice', '@Bob' for
// '@bob'); nothing is opened or written, and the listener hears nothing.
test('a client of asActor of an identity never registered: watch refuses it, naming the identity it is near', async () => {
  const mailbox = await memoryMailbox();
  try {
    const { '@alice': alice } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const before = (await allEvents(mailbox)).length;
    const heard: WakeStreamEvent[] = [];
    const watchAs = (identity: string) => mailbox.asActor({ identity, role: 'agent' }).watch((event) => void heard.push(event));
    await expect(watchAs('@ghost')).rejects.toMatchObject({
      code: 'AGENT_NOT_FOUND',
      envelope: { identity: '@ghost' },
      message: expect.stringMatching(/^No agent @ghost is registered: a watch as it would receive nothing.*registerAgent/),
    });
    await expect(watchAs('alice')).rejects.toMatchObject({
      code: 'AGENT_NOT_FOUND',
      envelope: { identity: 'alice', suggestions: ['@alice'] },
      message: expect.stringContaining('Did you mean @alice?'),
    });
    await expect(watchAs('@Bob')).rejects.toMatchObject({
      code: 'AGENT_NOT_FOUND',
      envelope: { identity: '@Bob', suggestions: ['@bob'] },
      message: expect.stringContaining('Did you mean @bob?'),
    });
    expect(heard).toEqual([]);
    expect((await allEvents(mailbox)).length).toBe(before);

    // A registered identity's watch of asActor opens as before and hears its wakes.
    await watchAs('@carol');
    await alice.send({ to: '@carol', subject: 'for carol', body: 'x' });
    await waitFor(() => heard.length === 2, { what: "@carol's wake" });
    expect(kinds(heard)).toEqual(['sync', 'wake']);
  } finally {
    await mailbox.close();
  }
});

/**
 * Two mailboxes (two API nodes) on one SQLite log, their views on one Redis: `body` gets both; both and the Redis are
 * closed after it.
 */
async function onTwoMailboxesOfOneLog(name: string, body: (first: Mailbox, second: Mailbox) => Promise<void>): Promise<void> {
  const redis = await startRedis();
  const file = path.join(tempDir(`watch-${name}-`), 'events.sqlite');
  const open: Mailbox[] = [];
  const start = async (nodeId: string) => {
    const mailbox = await createMailbox(
      {
        eventStoreUrl: `sqlite:${file}`,
        adminToken: ADMIN_TOKEN,
        logLevel: 'silent',
        redisUrl: redis.url,
        redisNamespace: `${name}${process.pid}`,
        redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
        nodeId,
      },
      { logger: silentLogger },
    );
    open.push(mailbox);
    return mailbox;
  };
  try {
    await body(await start('first'), await start('second'));
  } finally {
    for (const mailbox of open.reverse()) await mailbox.close();
    await redis.stop();
  }
}

test('a rotation or a retirement by another mailbox on the same log ends the watch within about a second', async () => {
  await onTwoMailboxesOfOneLog('revoked', async (first, second) => {
    const { '@b': b, '@c': c } = await registerAgents(first, ['@a', '@b', '@c']);
    const heard: Record<string, WakeStreamEvent[]> = { '@b': [], '@c': [] };
    await b.watch((event) => void heard['@b'].push(event));
    await c.watch((event) => void heard['@c'].push(event));
    const admin = second.asActor(ADMIN_ACTOR);
    await admin.rotateToken('@b');
    await admin.retireAgent('@c');
    await waitFor(() => heard['@b'].length === 2 && heard['@c'].length === 2, {
      timeoutMs: 15_000,
      what: 'the revocations heard by the first mailbox',
    });
    expect(heard['@b'][1]).toEqual({ event: 'revoked', data: { identity: '@b', reason: 'token rotated' } });
    expect(heard['@c'][1]).toEqual({ event: 'revoked', data: { identity: '@c', reason: 'agent retired' } });
  });
}, 60_000);

// A client of asActor holds no token to look up again: its watch ended only on a retirement this mailbox heard of (its
// own, or one a registry read here happened to notice). Retired through another mailbox on the same log while nothing
// here read the registry, or before the watch was opened, its agent's watch went quiet for good. Now it is looked up
// by identity each second, as a token is: it ends with 'revoked', as an HTTP wake stream ends.
test("a client of asActor: a retirement this mailbox did not hear of ends its watch with 'revoked' too", async () => {
  await onTwoMailboxesOfOneLog('revokedActor', async (first, second) => {
    const { '@d': d } = await registerAgents(second, ['@a', '@b', '@c', '@d']);
    const admin = second.asActor(ADMIN_ACTOR);
    await admin.retireAgent('@c'); // before any watch: its watch, opened later, ends too
    const heard: Record<string, WakeStreamEvent[]> = { '@a': [], '@b': [], '@c': [] };
    for (const identity of ['@a', '@b', '@c'])
      await first.asActor({ identity, role: 'agent' }).watch((event) => void heard[identity].push(event));
    await waitFor(() => heard['@c'].length === 2, { timeoutMs: 15_000, what: "the end of @c's watch" });
    expect(heard['@c']).toEqual([
      expect.objectContaining({ event: 'sync' }),
      { event: 'revoked', data: { identity: '@c', reason: 'agent retired' } },
    ]);

    await admin.retireAgent('@b');
    await waitFor(() => heard['@b'].length === 2, { timeoutMs: 15_000, what: "the end of @b's watch" });
    expect(heard['@b'][1]).toEqual({ event: 'revoked', data: { identity: '@b', reason: 'agent retired' } });

    // @a's watch goes on: a wake still reaches it, and nothing more reaches the ended ones.
    const before = (await allEvents(second)).length;
    await d.send({ to: '@a', subject: 'still here', body: 'x' });
    expect((await allEvents(second)).length).toBe(before + 1);
    await waitFor(() => heard['@a'].length === 2, { timeoutMs: 15_000, what: "@a's wake" });
    expect(kinds(heard['@a'])).toEqual(['sync', 'wake']);
    await first.close();
    expect(kinds(heard['@a'])).toEqual(['sync', 'wake', 'closed']);
    expect(kinds(heard['@b'])).toEqual(['sync', 'revoked']);
    expect(kinds(heard['@c'])).toEqual(['sync', 'revoked']);
  });
}, 60_000);
