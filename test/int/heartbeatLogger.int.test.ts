/**
 * startHeartbeat(mailbox) without a logger made a pino logger of its own at info: a host that created the mailbox with
 * createMailbox({ logLevel: 'warn' }) still had the heartbeat's info lines on its stdout. It now logs through the
 * mailbox's own logger (createMailbox's, at its level); a logger given to startHeartbeat still wins.
 */
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN } from '../support/fixtures';
import { recordingLogger } from '../support/recordingLogger';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';

let mailbox: Mailbox | undefined;
let heartbeat: Heartbeat | undefined;
afterEach(async () => {
  await heartbeat?.stop();
  await mailbox?.close();
});

const settings = { metricsPort: null };
// A daemon with a target, so that its start says nothing at warn (no target is warned of): these lines are the routing's.
const targets = () => [new RecordingNudgeTarget('webhook')];
const heartbeatLines = (log: ReturnType<typeof recordingLogger>) => log.lines.filter((line) => line.component === 'heartbeat');

test("without a logger, the heartbeat logs through the mailbox's own, at its level", async () => {
  // The logger createMailbox makes from logLevel is the one startHeartbeat now takes.
  const own = await createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'warn' });
  expect(own.logger.level).toBe('warn');
  await own.close();

  const mailboxLog = recordingLogger('info');
  mailbox = await createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN }, { logger: mailboxLog.logger });
  heartbeat = await startHeartbeat(mailbox, { settings, targets: targets(), schedule: false });
  expect(heartbeatLines(mailboxLog).map((line) => line.msg)).toEqual(['heartbeat: ticks on demand only (no schedule)']);

  // At warn, the level createMailbox({ logLevel: 'warn' }) gives its logger: the info line is not written, a warn is.
  await heartbeat.stop();
  await mailbox.close();
  const quiet = recordingLogger('warn');
  mailbox = await createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN }, { logger: quiet.logger });
  heartbeat = await startHeartbeat(mailbox, { settings, targets: targets(), schedule: false });
  await heartbeat.stop(); // 'heartbeat: stopped', at info too
  heartbeat = undefined;
  quiet.logger.warn({ component: 'heartbeat' }, 'a warn line is written'); // the positive signal: the logger writes
  expect(heartbeatLines(quiet).map((line) => line.msg)).toEqual(['a warn line is written']);
});

test('a logger given to startHeartbeat still wins over the mailbox’s', async () => {
  const mailboxLog = recordingLogger('info');
  const given = recordingLogger('info');
  mailbox = await createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN }, { logger: mailboxLog.logger });
  heartbeat = await startHeartbeat(mailbox, { settings, targets: targets(), schedule: false, logger: given.logger });
  expect(heartbeatLines(given).map((line) => line.msg)).toEqual(['heartbeat: ticks on demand only (no schedule)']);
  expect(heartbeatLines(mailboxLog)).toEqual([]);
});
