/**
 * A task refusal says what is true now and a next step that is open to the caller, never one that is not. Found by
 * walking a swarm's flows over plain HTTP (helper ht): @s sends, @b and @c are its audience.
 */
import { agentsServer } from '../support/agentsServer';
import { subscribe } from './wakeSubscriber';

const api = agentsServer(['@s', '@b', '@c']);
const post = (who: string, path: string, body: object, status?: number) => api.post(who, path, body, status);

const sendTask = async (to: string | string[]): Promise<string> =>
  (await post('@s', '/v1/messages', { to, subject: 'a task', body: 'x', task: {} }, 201)).messageId;

/** The refusal of `who`'s call, and that it wrote nothing. */
const refusal = async (who: string, path: string, body: object, status: number) => {
  const before = await api.server.eventCount();
  const answer = await api.server.call('POST', path, { token: api.t[who], body });
  expect([answer.status, answer.body.code]).toEqual([status, expect.any(String)]);
  expect(await api.server.eventCount()).toBe(before);
  return answer.body;
};

describe('leaseSeconds on a direct task', () => {
  test('while Submitted: the refusal offers to accept it (a move the holder has)', async () => {
    const taskId = await sendTask('@b');
    const body = await refusal('@b', `/v1/tasks/${taskId}/claim`, { leaseSeconds: 60 }, 400);
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'leaseSeconds', state: 'Submitted' });
    expect(body.message).toContain('accept it by moving it to Working');
  });

  test('while Working: never "accept it by moving it to Working" (it is Working already; that move is refused)', async () => {
    const taskId = await sendTask('@b');
    await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
    const body = await refusal('@b', `/v1/tasks/${taskId}/claim`, { leaseSeconds: 60 }, 400);
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'leaseSeconds', state: 'Working' });
    expect(body.message).not.toContain('moving it to Working');
    expect(body.message).toContain('takes no lease');
  });

  test('while it waits on its sender: says so, and names no move the holder does not have', async () => {
    const taskId = await sendTask('@b');
    await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
    await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'InputRequired', note: 'which branch?' });
    const body = await refusal('@b', `/v1/tasks/${taskId}/claim`, { leaseSeconds: 60 }, 400);
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'leaseSeconds', state: 'InputRequired' });
    expect(body.message).not.toContain('moving it to Working');
    expect(body.message).toContain('waits on its sender @s');
    // What the refusal offered instead is indeed refused: the holder has no move from InputRequired.
    const move = await refusal('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' }, 409);
    expect(move).toMatchObject({ code: 'INVALID_TRANSITION', allowed: [] });
  });
});

describe('a move the caller has none of says whose move it is', () => {
  test.each([['AGENT:*'], [['@b', '@c']]])(
    'an audience member moving a task %j another holds: told who holds it, to when, and when it may claim it',
    async (to) => {
      const taskId = await sendTask(to as string | string[]);
      const claim = await post('@b', `/v1/tasks/${taskId}/claim`, { leaseSeconds: 600 });
      for (const move of [{ to: 'Working' }, { to: 'Submitted' }, { to: 'Completed' }]) {
        const body = await refusal('@c', `/v1/tasks/${taskId}/transition`, move, 409);
        expect(body).toMatchObject({ code: 'INVALID_TRANSITION', currentState: 'Submitted', requested: move.to, allowed: [] });
        expect(body.message).toContain(`held by @b, whose lease runs to ${claim.leaseExpiresAt}`);
        expect(body.message).toContain('only its holder and its sender @s move it');
        expect(body.message).toContain('GET /v1/tasks?view=claimable');
      }
    },
  );

  test('its holder moving a task that waits on its sender: told it waits on the sender, and what moves it back', async () => {
    const taskId = await sendTask('AGENT:*');
    await post('@b', `/v1/tasks/${taskId}/claim`, {});
    await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
    await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'AuthRequired', note: 'may I push?' });
    for (const move of [{ to: 'Working' }, { to: 'Completed' }, { to: 'Submitted' }]) {
      const body = await refusal('@b', `/v1/tasks/${taskId}/transition`, move, 409);
      expect(body).toMatchObject({ code: 'INVALID_TRANSITION', currentState: 'AuthRequired', allowed: [] });
      expect(body.message).toContain('It waits on its sender @s');
      expect(body.message).toContain("a message of theirs to you in the task's thread");
    }
  });
});

describe('a move its holder may make only after another says which one first', () => {
  test.each([['@b'], [['@b', '@c']]])(
    'the holder of a Submitted task %j moving it to Completed, Failed or InputRequired: told to move it to Working first',
    async (to) => {
      const taskId = await sendTask(to as string | string[]);
      if (Array.isArray(to)) await post('@b', `/v1/tasks/${taskId}/claim`, {});
      for (const [move, extra] of [
        ['Completed', {}],
        ['Failed', { reason: 'no access' }],
        ['InputRequired', { note: 'which branch?' }],
      ] as const) {
        const body = await refusal('@b', `/v1/tasks/${taskId}/transition`, { to: move, ...extra }, 409);
        expect(body).toMatchObject({ code: 'INVALID_TRANSITION', currentState: 'Submitted', requested: move });
        expect(body.allowed).toContain('Working');
        expect(body.message).toContain(`${move} comes after Working: move it to Working first, then to ${move}.`);
      }
      // The way it names is open: Working, then Completed.
      await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
      expect(await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Completed' })).toMatchObject({ state: 'Completed' });
    },
  );

  test.each([['@b'], [['@b', '@c']]])(
    'no way is named where the caller has none (%j: the sender completing, the holder moving Working to Working)',
    async (to) => {
      const taskId = await sendTask(to as string | string[]);
      if (Array.isArray(to)) await post('@b', `/v1/tasks/${taskId}/claim`, {});
      const bySender = await refusal('@s', `/v1/tasks/${taskId}/transition`, { to: 'Completed' }, 409);
      expect(bySender.message).not.toContain('comes after');
      await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
      // Not "through Submitted": from Working that is a release, after which @b holds nothing to move.
      const again = await refusal('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' }, 409);
      expect(again.message).not.toContain('comes after');
    },
  );
});

describe('a claim refused while another holds the task says the caller is woken when it comes back, and it is', () => {
  test.each([['AGENT:*'], [['@b', '@c']]])(
    '%j: TASK_ALREADY_CLAIMED, then the release wakes @c, whose claim wins',
    async (to) => {
      const taskId = await sendTask(to as string | string[]);
      await post('@b', `/v1/tasks/${taskId}/claim`, {});
      const body = await refusal('@c', `/v1/tasks/${taskId}/claim`, {}, 409);
      expect(body).toMatchObject({ code: 'TASK_ALREADY_CLAIMED', claimant: '@b' });
      expect(body.message).toContain('Should it come back, you are woken (a wake/task on GET /v1/wake');
      const moving = await refusal('@c', `/v1/tasks/${taskId}/transition`, { to: 'Working' }, 409);
      expect(moving.message).toContain('you are woken (wake/task), and you may claim it');

      const wakes = await subscribe(api.server.url, api.t['@c']);
      try {
        await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Submitted' });
        const woken = await wakes.next((e) => e.event === 'wake' && e.data.type === 'wake/task' && e.data.taskId === taskId);
        expect(woken.data).toMatchObject({ event: 'TaskReleased', state: 'Submitted', assignee: null, by: '@b' });
        expect(await post('@c', `/v1/tasks/${taskId}/claim`, {})).toMatchObject({ assignee: '@c' });
      } finally {
        wakes.close();
      }
    },
  );
});
