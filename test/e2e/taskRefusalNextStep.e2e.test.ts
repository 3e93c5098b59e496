/**
 * A task refusal says what is true now and a next step that is open to the caller, never one that is not. Found by
 * walking a swarm's flows over plain HTTP (helper ht): @s sends, @b and @c are its audience.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@b', '@c']);
});
afterAll(() => server.close());

const post = async (who: string, path: string, body: object, status = 200) => {
  const answer = await server.call('POST', path, { token: t[who], body });
  expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
  return answer.body;
};

const sendTask = async (to: string | string[]): Promise<string> =>
  (await post('@s', '/v1/messages', { to, subject: 'a task', body: 'x', task: {} }, 201)).messageId;

/** The refusal of `who`'s call, and that it wrote nothing. */
const refusal = async (who: string, path: string, body: object, status: number) => {
  const before = await server.eventCount();
  const answer = await server.call('POST', path, { token: t[who], body });
  expect([answer.status, answer.body.code]).toEqual([status, expect.any(String)]);
  expect(await server.eventCount()).toBe(before);
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
