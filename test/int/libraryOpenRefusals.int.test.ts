/**
 * What createMailbox's caller catches when the mailbox cannot be opened: a MailboxError with a documented `code`,
 * naming createMailbox's options, never mailbox serve's variables. A second createMailbox on a data dir another
 * mailbox serves rejected with a ViewsFileInUse (a StartupError: no `code`, no envelope) telling it to "give this one
 * another MAILBOX_DATA_DIR"; a log SQLite cannot read, with an UnreadableLogFile; an unreachable Redis named
 * MAILBOX_REDIS_URL (in `field` too).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createMailbox } from '../../src/mailbox';
import { MailboxError } from '../../src/errors';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { allEvents, ADMIN_TOKEN, registerAgents, silentLogger, tempDir } from '../support/fixtures';
import { freePort } from '../support/redisServer';
import { rejectionOf } from './coreHarness';

test('a second createMailbox on a data dir another mailbox serves: UNAVAILABLE naming dataDir; nothing written, the first serves on', async () => {
  const dataDir = tempDir('library-in-use-');
  const first = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN }, { logger: silentLogger });
  try {
    const agents = await registerAgents(first, ['@a', '@b', '@c']);
    const before = (await allEvents(first)).length;
    const error = await rejectionOf(createMailbox({ dataDir, adminToken: ADMIN_TOKEN }, { logger: silentLogger }));
    expect(error).toBeInstanceOf(MailboxError);
    expect(error.envelope).toMatchObject({ code: 'UNAVAILABLE', error: 'Data dir in use', field: 'dataDir' });
    // The other mailbox is this process's own: the refusal says so, and to close it, not to stop a process.
    expect(error.message).toMatch(
      new RegExp(`^another mailbox in this process \\(pid ${process.pid}, since \\S+\\) is serving the views file `),
    );
    expect(error.message).toContain(': close that one first, or give this one another dataDir.');
    expect(JSON.stringify(error.envelope)).not.toMatch(/MAILBOX_/);
    expect((await allEvents(first)).length).toBe(before);
    await agents['@a'].send({ to: ['@b', '@c'], subject: 'still here', body: 'x' });
    expect((await agents['@c'].listMessages({ status: 'unread' })).messages.map((m) => m.subject)).toEqual(['still here']);
  } finally {
    await first.close();
  }
  // Once the first is closed, the data dir opens, with what the first wrote; closed twice, it is closed once.
  const again = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN }, { logger: silentLogger });
  expect((await again.asActor(ADMIN_ACTOR).listAgents()).agents.map((agent) => agent.identity)).toEqual(['@a', '@b', '@c']);
  await again.close();
  await again.close();
});

test('a log SQLite cannot read: UNAVAILABLE "Event log unreadable" naming dataDir; the file is left as it was', async () => {
  const dataDir = tempDir('library-bad-log-');
  const log = path.join(dataDir, 'events.sqlite');
  fs.writeFileSync(log, 'not a database '.repeat(512));
  const error = await rejectionOf(createMailbox({ dataDir }, { logger: silentLogger }));
  expect(error).toBeInstanceOf(MailboxError);
  expect(error.envelope).toMatchObject({ code: 'UNAVAILABLE', error: 'Event log unreadable', field: 'dataDir', file: log });
  expect(error.message).toContain('or set dataDir to another place');
  expect(error.message).not.toMatch(/MAILBOX_/);
  expect(fs.readFileSync(log, 'utf8')).toBe('not a database '.repeat(512));
});

test('a Redis that does not answer: UNAVAILABLE naming redisUrl, not MAILBOX_REDIS_URL', async () => {
  const port = await freePort(); // nothing listens there
  const error = await rejectionOf(
    createMailbox({ dataDir: tempDir('library-no-redis-'), redisUrl: `redis://127.0.0.1:${port}` }, { logger: silentLogger }),
  );
  expect(error).toBeInstanceOf(MailboxError);
  expect(error.envelope).toMatchObject({ code: 'UNAVAILABLE', field: 'redisUrl' });
  expect(error.message).toContain('start it, or fix redisUrl');
  expect(JSON.stringify(error.envelope)).not.toMatch(/MAILBOX_/);
});
