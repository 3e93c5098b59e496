/**
 * A full Redis under noeviction (maxmemory reached) refuses the projector's writes until there is room. Sends still
 * answer 201 (the log is the authority) with VIEWS_LAGGING, and the views catch up once there is room. The server
 * logged 'projection subscription failed' at error level with the driver's stack at each retry (ten lines in 20 s of a
 * swarm run, one every few seconds for as long as Redis stays full); it is now an outage said once, with the reason,
 * and one line when the views store answers again.
 */
import { type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import { liftRedisMemoryLimit, limitRedisMemory, startLoggedRedisServer, withRedisAdmin } from '../support/redisViews';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
let server: TestServer | null = null;
const ownRedis = process.env.REDIS_URL ? it.skip : it; // the test sets this server's memory limit

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await server?.close();
  await redis.stop();
});

ownRedis(
  'Redis full: sends answer 201 VIEWS_LAGGING, the log says it once, and the views catch up once there is room',
  async () => {
    const started = await startLoggedRedisServer(redis.url, `oom${process.pid}`, { awaitProjectionMs: 300 });
    server = started.server;
    const { log, tokens } = started;
    const send = (from: string, to: string, subject: string) =>
      server!.call('POST', '/v1/messages', { token: tokens[from], body: { to, subject, body: 'x' } });
    const count = async (identity: string) =>
      (await server!.call('GET', '/v1/inbox/count', { token: tokens[identity] })).body.unreadCount as number;
    expect((await send('@a', '@b', 'before')).status).toBe(201);
    expect(await count('@b')).toBe(1);

    await withRedisAdmin(redis.url, async (admin) => {
      await limitRedisMemory(admin, 'noeviction', 1);
      const eventsBefore = await started.server.eventCount();
      const answers = [await send('@a', '@b', 'full 1'), await send('@c', '@b', 'full 2'), await send('@b', '@c', 'full 3')];
      for (const answer of answers) {
        expect(answer.status).toBe(201);
        expect(answer.body.warnings.map((warning: { code: string }) => warning.code)).toContain('VIEWS_LAGGING');
      }
      expect(await started.server.eventCount()).toBe(eventsBefore + 3);
      const outOfMemory = () => log.lines.filter((line) => /out of memory/.test(JSON.stringify(line)));
      await waitFor(() => outOfMemory().length > 0, { timeoutMs: 15_000, everyMs: 50, what: 'the full Redis said in the log' });
      // A few of the projector's retries later: still one line, and no error line with a stack per retry.
      const ready = async () => (await server!.call('GET', '/readyz')).body;
      await waitFor(async () => /out of memory/.test(JSON.stringify(await ready())), {
        timeoutMs: 15_000,
        everyMs: 50,
        what: 'readiness naming the full Redis',
      });
      await liftRedisMemoryLimit(admin);
    });
    await waitFor(async () => (await count('@b')) === 3 && (await count('@c')) === 1, {
      timeoutMs: 30_000,
      everyMs: 100,
      what: 'the views caught up once Redis had room',
    });
    expect(await count('@a')).toBe(0);
    const projectorErrors = log.lines.filter((line) => line.level >= 50 && /projection/.test(String(line.msg)));
    expect(projectorErrors.map((line) => line.msg)).toEqual([]);
    const projectorLines = log.lines.filter(
      (line) => /out of memory/.test(JSON.stringify(line)) && /projections/.test(String(line.msg)),
    );
    expect(projectorLines).toHaveLength(1);
    expect(projectorLines[0].level).toBe(40);
  },
);
