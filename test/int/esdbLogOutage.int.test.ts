/**
 * The event log (EventStoreDB, the in-repo double) goes away under the projector of a mailbox whose views are in a real
 * Redis, then comes back, with no send meanwhile nor after it. Found by a walk through the scaled deployment: the
 * projector said "projections: the views store does not answer" (Redis answered all along), its subscription logged a
 * warn line with the whole gRPC stack at every retry (five every few seconds for as long as the log was down), and once
 * the log was back nothing was said and /readyz kept lastError "The event store (EventStoreDB) is unavailable" until
 * the next send, whose batch then said "the views store answers again" with a downMs that counted the quiet time.
 * Now: one warn line for the live subscription's drop, one for the log's outage, the retries at debug; one info line
 * when the log answers again, and lastError null then, before any send. Three identities throughout.
 */
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents } from '../support/fixtures';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { startRedis, type TestRedis } from '../support/redisServer';

interface Line {
  level: number;
  msg: string;
  err?: unknown;
  [field: string]: unknown;
}

let redis: TestRedis;
let double: EsdbDouble;
let mailbox: Mailbox;
const lines: Line[] = [];

beforeAll(async () => {
  redis = await startRedis();
  double = await EsdbDouble.start();
});
afterAll(async () => {
  await mailbox?.close();
  await double?.close();
  await redis?.stop();
});

/** Resolves with the first line (from index `from` on) whose message starts with `text`. */
async function logged(text: string, from = 0, timeoutMs = 30_000): Promise<Line> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = lines.slice(from).find((l) => l.msg.startsWith(text));
    if (line) return line;
    if (Date.now() > deadline)
      throw new Error(`no line '${text}' within ${timeoutMs} ms; got ${JSON.stringify(lines.map((l) => l.msg))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const unreadOf = async (client: { unreadCount(): Promise<{ unread: number }> }) => (await client.unreadCount()).unread;

test('the log down and back, no send: said as the log, once; said back without a send; lastError cleared', async () => {
  mailbox = await createMailbox(
    {
      eventStoreUrl: `${double.url}&defaultDeadline=1500`,
      redisUrl: redis.url,
      redisNamespace: `logoutage${process.pid}`,
      adminToken: ADMIN_TOKEN,
      nodeId: 'node-a',
    },
    { logger: pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) }) },
  );
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: ['@b', '@c'], subject: 'before', body: '1' });
  expect([await unreadOf(a), await unreadOf(b), await unreadOf(c)]).toEqual([0, 1, 1]);

  const outageFrom = lines.length;
  await double.stop();
  const down = await logged('projections: the event log does not answer', outageFrom);
  expect(down).toMatchObject({ level: 40, reason: expect.stringMatching(/^The event store \(EventStoreDB\) is unavailable/) });
  expect(mailbox.runner.getStatus().lastError).toMatch(/^The event store \(EventStoreDB\) is unavailable/);
  // A second round of the projector's retries (its subscription gave up once more): said at debug only.
  const stillDownAt = lines.indexOf(await logged('projections: the event log still does not answer', outageFrom));

  const duringOutage = lines.slice(outageFrom, stillDownAt + 1);
  expect(duringOutage.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([
    'EventStoreDB subscription dropped; resubscribing from the last delivered position',
    'projections: the event log does not answer; applying from the checkpoint again once it does',
  ]);
  expect(duringOutage.filter((l) => l.level >= 40 && l.err !== undefined)).toEqual([]); // no stack: the server's words
  expect(duringOutage.map((l) => l.msg)).not.toContainEqual(expect.stringMatching(/views store/));
  expect(duringOutage.filter((l) => l.msg.startsWith('EventStoreDB subscription: resubscribing failed')).length).toBeGreaterThan(
    0,
  );

  const backFrom = lines.length;
  await double.start();
  const back = await logged('projections: the event log answers again', backFrom);
  expect(back).toMatchObject({ level: 30, retries: expect.any(Number), downMs: expect.any(Number) });
  // Nothing was sent: the runner is no longer in the log's failure once the log answers.
  expect(mailbox.runner.getStatus()).toMatchObject({ lastError: null, lastErrorAt: null });
  expect(lines.slice(outageFrom).map((l) => l.msg)).not.toContainEqual(expect.stringMatching(/views store/));

  // The projector resumes from its checkpoint: what is sent now lands once, and nothing counts twice.
  await c.send({ to: '@a', subject: 'after', body: '2' });
  expect([await unreadOf(a), await unreadOf(b), await unreadOf(c)]).toEqual([1, 1, 1]);
  expect(mailbox.runner.getStatus().checkpoint).toBe((await mailbox.eventStore.headPosition())!.toString());
}, 90_000);
