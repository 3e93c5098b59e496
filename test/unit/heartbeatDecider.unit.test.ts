/** Given (past nudges) / when (a tick at `now` sees these counts) / then (these verdicts), for the pure heartbeat decider. */
import {
  decideNudges,
  mayNudge,
  recordNudges,
  rememberedNudges,
  unreadSetSignature,
  type AgentSnapshot,
  type Decision,
  type NudgePolicy,
  type NudgeState,
} from '../../src/heartbeat/nudgeDecider';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const MIN = 60_000;
const policy: NudgePolicy = { idleMs: 10 * MIN, cooldownMs: 15 * MIN, wakeGraceMs: MIN, optedOut: new Set(['@quiet']) };

const agent = (identity: string, over: Partial<AgentSnapshot> = {}): AgentSnapshot => ({
  identity,
  unread: 0,
  unseen: 0,
  tasksWaiting: 0,
  tasksWaitingSince: null,
  repliesOwed: 0,
  nextReplyDueBy: null,
  byPriority: { low: 0, normal: 0, high: 0 },
  oldestUnreadAt: null,
  lastActivityAt: null,
  newestUnreadId: null,
  lastWakeAt: null,
  retired: false,
  ...over,
});
const withMail = (identity: string, unread: number, newest: string, over: Partial<AgentSnapshot> = {}) =>
  agent(identity, {
    unread,
    byPriority: { low: 0, normal: unread, high: 0 },
    oldestUnreadAt: '2030-01-01T11:00:00.000Z',
    newestUnreadId: newest,
    lastActivityAt: new Date(T0 - 30 * MIN).toISOString(),
    ...over,
  });

/** given(past ticks) -> when(now, agents) -> then(verdicts), deciding twice to prove purity. */
function given(history: Array<{ at: number; agents: AgentSnapshot[] }> = []) {
  let state: NudgeState = new Map();
  for (const past of history) {
    const decisions = decideNudges(past.agents, state, past.at, policy);
    state = recordNudges(
      state,
      decisions.filter((d) => d.nudge),
      past.at,
    );
  }
  return {
    when: (now: number, agents: AgentSnapshot[]) => {
      const frozen = structuredClone([...state]);
      const first = decideNudges(agents, state, now, policy);
      expect(decideNudges(agents, state, now, policy)).toEqual(first);
      expect([...state]).toEqual(frozen); // the decider never mutates its state
      return {
        then: (verdicts: Record<string, Decision['verdict']>) => {
          expect(Object.fromEntries(first.map((d) => [d.identity, d.verdict]))).toEqual(verdicts);
          return first;
        },
      };
    },
  };
}

describe('heartbeat decider', () => {
  test('B idle with 2 unread -> exactly one nudge carrying its counts; A and C without mail are left alone', () => {
    const [, b] = given()
      .when(T0, [agent('@a'), withMail('@b', 2, 'm2'), agent('@c')])
      .then({ '@a': 'no_mail', '@b': 'nudge', '@c': 'no_mail' });
    expect(b.nudge).toMatchObject({
      type: 'heartbeat/nudge',
      identity: '@b',
      unread: 2,
      newestUnreadId: 'm2',
      byPriority: { low: 0, normal: 2, high: 0 },
      idleForMs: 30 * MIN,
      at: new Date(T0).toISOString(),
    });
    expect(b.nudge!.nudgeId).toMatch(/^[0-9a-f]{32}$/);
  });

  test('the same unread set never nudges twice, not even long after the cooldown', () => {
    given([{ at: T0, agents: [withMail('@b', 2, 'm2')] }])
      .when(T0 + 24 * 60 * MIN, [withMail('@b', 2, 'm2')])
      .then({ '@b': 'same_set' });
  });

  test('new mail after the cooldown -> one more nudge, with a new nudge id', () => {
    const first = given()
      .when(T0, [withMail('@b', 2, 'm2')])
      .then({ '@b': 'nudge' })[0];
    const second = given([{ at: T0, agents: [withMail('@b', 2, 'm2')] }])
      .when(T0 + 16 * MIN, [withMail('@b', 3, 'm3')])
      .then({ '@b': 'nudge' })[0];
    expect(second.nudge!.nudgeId).not.toBe(first.nudge!.nudgeId);
  });

  test('new mail within the cooldown waits (no floods)', () => {
    given([{ at: T0, agents: [withMail('@b', 2, 'm2')] }])
      .when(T0 + 5 * MIN, [withMail('@b', 3, 'm3')])
      .then({ '@b': 'cooldown' });
  });

  test('archive one and receive one (same count, new newest message) is a new set', () => {
    given([{ at: T0, agents: [withMail('@b', 2, 'm2')] }])
      .when(T0 + 16 * MIN, [withMail('@b', 2, 'm3')])
      .then({ '@b': 'nudge' });
  });

  describe('a set that only shrank, or got back what left it, holds nothing newer than the last nudge: the same set', () => {
    const sent = (minute: number) => new Date(T0 - 60 * MIN + minute * MIN).toISOString();
    const nudgedAbout = [{ at: T0, agents: [withMail('@b', 3, 'm3', { newestUnreadSentAt: sent(3) })] }];
    test.each([
      ['an older one read (the newest left)', 'same_set', withMail('@b', 2, 'm3', { newestUnreadSentAt: sent(3) })],
      ['the newest read (an older one left)', 'same_set', withMail('@b', 2, 'm2', { newestUnreadSentAt: sent(2) })],
      ['archived, then unarchived (as it was)', 'same_set', withMail('@b', 3, 'm3', { newestUnreadSentAt: sent(3) })],
      ['newer mail', 'nudge', withMail('@b', 2, 'm4', { newestUnreadSentAt: sent(4) })],
      [
        'other mail sent in the same millisecond as the newest nudged',
        'nudge',
        withMail('@b', 2, 'm5', { newestUnreadSentAt: sent(3) }),
      ],
      ['its send time not looked up: by the signature alone', 'nudge', withMail('@b', 2, 'm2')],
    ] as const)('%s: %s', (_, verdict, now) => {
      given(nudgedAbout)
        .when(T0 + 16 * MIN, [now])
        .then({ '@b': verdict });
    });
  });

  test('B read everything -> no nudge', () => {
    given([{ at: T0, agents: [withMail('@b', 2, 'm2')] }])
      .when(T0 + 16 * MIN, [agent('@b', { lastActivityAt: new Date(T0 - 30 * MIN).toISOString() })])
      .then({ '@b': 'no_mail' });
  });

  test('an agent that sent or read recently is active and left alone', () => {
    given()
      .when(T0, [withMail('@b', 2, 'm2', { lastActivityAt: new Date(T0 - 9 * MIN).toISOString() })])
      .then({ '@b': 'active' });
  });

  test('an agent that was never active counts as idle', () => {
    given()
      .when(T0, [withMail('@b', 1, 'm1', { lastActivityAt: null })])
      .then({ '@b': 'nudge' });
  });

  test('retired agents are never nudged (they can no longer sign in)', () => {
    given()
      .when(T0, [withMail('@gone', 3, 'm3', { retired: true })])
      .then({ '@gone': 'retired' });
  });

  test('opted-out agents are never nudged', () => {
    given()
      .when(T0, [withMail('@quiet', 5, 'm5')])
      .then({ '@quiet': 'opted_out' });
  });

  test('a wake just now gives the agent the grace period first', () => {
    given()
      .when(T0, [withMail('@b', 1, 'm1', { lastWakeAt: T0 - 30_000 })])
      .then({ '@b': 'wake_grace' });
    given()
      .when(T0, [withMail('@b', 1, 'm1', { lastWakeAt: T0 - 2 * MIN })])
      .then({ '@b': 'nudge' });
  });

  test('mayNudge screens on counts alone, so the daemon looks up the newest unread only when needed', () => {
    expect(mayNudge(withMail('@b', 2, 'm2'), T0, policy)).toBe(true);
    expect(mayNudge(agent('@b'), T0, policy)).toBe(false);
    expect(mayNudge(withMail('@quiet', 2, 'm2'), T0, policy)).toBe(false);
  });

  test('the signature falls back to the oldest unread time when the newest message is unknown', () => {
    expect(unreadSetSignature({ unread: 2, newestUnreadId: null, oldestUnreadAt: '2030-01-01T11:00:00.000Z' })).toBe(
      '2|oldest:2030-01-01T11:00:00.000Z',
    );
    expect(unreadSetSignature({ unread: 2, newestUnreadId: 'm2', oldestUnreadAt: null })).toBe('2|m2');
  });

  it('tasks waiting on an idle agent nudge it like mail (issue 12); a new waiting task is a new set, the same set nudges once', () => {
    const idle = { lastActivityAt: new Date(T0 - 30 * MIN).toISOString() };
    const decisions = given()
      .when(T0, [agent('@worker', { tasksWaiting: 1, ...idle }), agent('@idle', idle)])
      .then({ '@worker': 'nudge', '@idle': 'no_mail' });
    expect(decisions[0].nudge).toMatchObject({ identity: '@worker', unread: 0, tasksWaiting: 1 });
    const past = [{ at: T0, agents: [agent('@worker', { tasksWaiting: 1, ...idle })] }];
    given(past)
      .when(T0 + 20 * MIN, [agent('@worker', { tasksWaiting: 1, ...idle })])
      .then({ '@worker': 'same_set' });
    given(past)
      .when(T0 + 20 * MIN, [agent('@worker', { tasksWaiting: 2, ...idle })])
      .then({ '@worker': 'nudge' });
  });

  describe('which tasks wait (tasksWaitingSince): a task ended and a new one come, or one back, at the same count, is a new set', () => {
    const idle = { lastActivityAt: new Date(T0 - 30 * MIN).toISOString() };
    /** `count` tasks wait on it, the last one began waiting at log position `position` (task `taskId`). */
    const waiting = (identity: string, count: number, position: number, taskId: string, over: Partial<AgentSnapshot> = {}) =>
      agent(identity, {
        tasksWaiting: count,
        tasksWaitingSince: { position, at: new Date(T0 - 40 * MIN + position).toISOString(), taskId },
        ...idle,
        ...over,
      });
    const past = [{ at: T0, agents: [waiting('@w', 1, 5, 't1'), waiting('@x', 2, 7, 't4')] }];

    test('given @w nudged about t1, when t1 ended and t2 came (still one): cooldown, then a nudge with a new nudgeId', () => {
      const [first] = given()
        .when(T0, [waiting('@w', 1, 5, 't1')])
        .then({ '@w': 'nudge' });
      given(past)
        .when(T0 + 5 * MIN, [waiting('@w', 1, 9, 't2')])
        .then({ '@w': 'cooldown' });
      const [again] = given(past)
        .when(T0 + 20 * MIN, [waiting('@w', 1, 9, 't2')])
        .then({ '@w': 'nudge' });
      expect(again.nudge).toMatchObject({ identity: '@w', unread: 0, tasksWaiting: 1 });
      expect(again.nudge!.nudgeId).not.toBe(first.nudge!.nudgeId);
    });

    test('given @w nudged about t1, when t1 asked its sender and came back (the same task, waiting again): a nudge', () => {
      given(past)
        .when(T0 + 20 * MIN, [waiting('@w', 1, 12, 't1')])
        .then({ '@w': 'nudge' });
    });

    test('given @x nudged about t3 and t4, when nothing began waiting since (a lease renewed, an artifact): same_set', () => {
      given(past)
        .when(T0 + 60 * MIN, [waiting('@x', 2, 7, 't4')])
        .then({ '@x': 'same_set' });
    });

    test('given @x nudged about t3 and t4, when t4 ended and t5 came: a nudge; with mail too, its signature moves as well', () => {
      given(past)
        .when(T0 + 20 * MIN, [waiting('@x', 2, 11, 't5')])
        .then({ '@x': 'nudge' });
      const mail = withMail('@x', 1, 'm1', { tasksWaiting: 2, tasksWaitingSince: { position: 7, at: 'x', taskId: 't4' } });
      const moved = { ...mail, tasksWaitingSince: { position: 11, at: 'x', taskId: 't5' } };
      expect(unreadSetSignature(mail)).not.toBe(unreadSetSignature(moved));
    });

    test('no mark in the counts: the signature has their count alone', () => {
      expect(unreadSetSignature({ unread: 0, newestUnreadId: null, oldestUnreadAt: null, tasksWaiting: 2 })).toBe(
        '0|oldest:-|tasks:2',
      );
    });
  });

  describe('rememberedNudges: a daemon that shares no records starts from the last nudges the log recorded', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    /** Given each identity's last nudge in the log, when a new daemon's first tick sees these agents, then these verdicts. */
    const remembered = (
      lastNudges: Record<string, number>,
      given: Array<AgentSnapshot & { newestUnreadSentAt: string | null }>,
      now: number,
      own: NudgeState = new Map(),
    ) => {
      const agents = given;
      const last = new Map(Object.entries(lastNudges).map(([identity, ms]) => [identity, { at: at(ms) }]));
      const state = rememberedNudges(own, agents, last);
      expect(rememberedNudges(own, agents, last)).toEqual(state); // pure
      return Object.fromEntries(decideNudges(agents, state, now, policy).map((d) => [d.identity, d.verdict]));
    };
    const sentAt = (ms: number) => ({ newestUnreadSentAt: at(ms) });

    test('newest unread sent before the last nudge: the same set, never nudged again; never nudged: nudged', () => {
      expect(
        remembered(
          { '@b': T0 - 5 * MIN },
          [
            { ...withMail('@b', 2, 'm2'), ...sentAt(T0 - 20 * MIN) },
            { ...withMail('@c', 1, 'm3'), ...sentAt(T0 - 20 * MIN) },
          ],
          T0 + 60 * MIN,
        ),
      ).toEqual({ '@b': 'same_set', '@c': 'nudge' });
    });

    test('newest unread sent after the last nudge: a new set, nudged once the cooldown since that nudge has passed', () => {
      const b = { ...withMail('@b', 3, 'm4'), ...sentAt(T0 - 2 * MIN) };
      expect(remembered({ '@b': T0 - 5 * MIN }, [b], T0)).toEqual({ '@b': 'cooldown' });
      expect(remembered({ '@b': T0 - 5 * MIN }, [b], T0 + 10 * MIN)).toEqual({ '@b': 'nudge' });
    });

    /** When a task last began waiting on the agent (its counts' tasksWaitingSince), or no mark. */
    const tasksChangedAt = (ms: number | null) => ({
      tasksWaitingSince: ms === null ? null : { position: ms - T0 + 100 * MIN, at: at(ms), taskId: 't1' },
    });
    const idleWith = (identity: string, tasksWaiting: number) =>
      agent(identity, { tasksWaiting, lastActivityAt: new Date(T0 - 30 * MIN).toISOString() });

    test('tasks alone, none began waiting since the last nudge: the same set, never nudged again (each start nudged it)', () => {
      const worker = { ...idleWith('@w', 2), newestUnreadSentAt: null, ...tasksChangedAt(T0 - 20 * MIN) };
      expect(remembered({ '@w': T0 - 5 * MIN }, [worker], T0 + 60 * MIN)).toEqual({ '@w': 'same_set' });
    });

    test('tasks alone, one began waiting after the last nudge (a new task, or one back on the agent): cooldown, then nudged', () => {
      const worker = { ...idleWith('@w', 2), newestUnreadSentAt: null, ...tasksChangedAt(T0 - 2 * MIN) };
      expect(remembered({ '@w': T0 - 5 * MIN }, [worker], T0)).toEqual({ '@w': 'cooldown' });
      expect(remembered({ '@w': T0 - 5 * MIN }, [worker], T0 + 10 * MIN)).toEqual({ '@w': 'nudge' });
    });

    test('tasks with no mark of when they began waiting: only the cooldown holds', () => {
      const worker = { ...idleWith('@w', 1), newestUnreadSentAt: null, ...tasksChangedAt(null) };
      expect(remembered({ '@w': T0 - 5 * MIN }, [worker], T0)).toEqual({ '@w': 'cooldown' });
      expect(remembered({ '@w': T0 - 5 * MIN }, [worker], T0 + 10 * MIN)).toEqual({ '@w': 'nudge' });
    });

    test('mail and tasks: the same set only when neither is newer than the last nudge', () => {
      const old = { ...sentAt(T0 - 60 * MIN), ...tasksChangedAt(T0 - 60 * MIN) };
      const mailAndTasks = (identity: string, over: object) => ({
        ...withMail(identity, 1, `m-${identity}`, { tasksWaiting: 1 }),
        ...old,
        ...over,
      });
      const nudgedAt = { '@same': T0 - 5 * MIN, '@newtask': T0 - 5 * MIN, '@newmail': T0 - 5 * MIN };
      const agents = [
        mailAndTasks('@same', {}),
        mailAndTasks('@newtask', tasksChangedAt(T0 - 2 * MIN)),
        mailAndTasks('@newmail', sentAt(T0 - 2 * MIN)),
      ];
      expect(remembered(nudgedAt, agents, T0 + 60 * MIN)).toEqual({
        '@same': 'same_set',
        '@newtask': 'nudge',
        '@newmail': 'nudge',
      });
      expect(remembered(nudgedAt, agents, T0)).toEqual({ '@same': 'same_set', '@newtask': 'cooldown', '@newmail': 'cooldown' });
    });

    test("the daemon's own record wins over the log's", () => {
      const b = { ...withMail('@b', 2, 'm2'), ...sentAt(T0 - 20 * MIN) };
      const own: NudgeState = new Map([['@b', { signature: 'an older set', at: T0 - 30 * MIN }]]);
      expect(remembered({ '@b': T0 - 5 * MIN }, [b], T0, own)).toEqual({ '@b': 'nudge' });
    });
  });
});
