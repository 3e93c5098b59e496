/**
 * The library's options beside a call's input. A key they do not know was ignored: createMailbox({ datadir }) opened
 * the default ./data (the log went where the caller did not say), send(input, { idempotency: 'k' }) sent without a key
 * (its retry sent the message twice), markRead(input, { idempotencyKey }) took a key nothing honors, and watch() with
 * no listener opened a stream that failed with "emit is not a function" (a TypeError, no envelope). Each is refused
 * now with a MailboxError naming the key and the valid form, before anything is opened or written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createMailbox } from '../../src/mailbox';
import { MailboxError } from '../../src/errors';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { allEvents, memoryMailbox, registerAgents, silentLogger, tempDir } from '../support/fixtures';
import { rejectionOf } from './coreHarness';

test('createMailbox with an option it does not know is refused, naming it and the near one; nothing is opened', async () => {
  const dir = tempDir('mailbox-options-');
  const cwd = process.cwd();
  process.chdir(dir); // the default ./data would be made here
  try {
    const error = await rejectionOf(createMailbox({ datadir: path.join(dir, 'mine') } as never, { logger: silentLogger }));
    expect(error).toBeInstanceOf(MailboxError);
    expect(error.envelope).toMatchObject({
      code: 'UNKNOWN_FIELD',
      field: 'datadir',
      message: expect.stringContaining("createMailbox options has no option 'datadir' (did you mean 'dataDir'?)"),
    });
    expect(error.envelope.allowed).toEqual(expect.arrayContaining(['dataDir', 'adminToken', 'eventStoreUrl']));
    expect(fs.readdirSync(dir)).toEqual([]);
  } finally {
    process.chdir(cwd);
  }
});

test('a command option it does not know, or an idempotencyKey on a write that does not replay by it, is refused; nothing written', async () => {
  const mailbox = await memoryMailbox();
  try {
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b']);
    const { messageId } = await a.send({ to: '@b', subject: 'keyed', body: 'x' }, { idempotencyKey: 'k1' });
    const before = (await allEvents(mailbox)).length;

    const misspelt = await rejectionOf(a.send({ to: '@b', subject: 'twice?', body: 'x' }, { idempotency: 'k2' } as never));
    expect(misspelt.envelope).toMatchObject({
      code: 'UNKNOWN_FIELD',
      field: 'idempotency',
      message: expect.stringContaining("send options has no option 'idempotency' (did you mean 'idempotencyKey'?)"),
    });
    const keyed = await rejectionOf(b.markRead({ messageId }, { idempotencyKey: 'k3' }));
    expect(keyed.envelope).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'idempotencyKey',
      message: expect.stringContaining('markRead does not take an idempotencyKey: only send replays'),
    });
    const notObject = await rejectionOf(b.archive(messageId, 'k4' as never));
    expect(notObject.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'archive options' });
    expect((await allEvents(mailbox)).length).toBe(before);

    // The options it takes still work (a retried keyed send is the same message).
    expect(
      (await a.send({ to: '@b', subject: 'keyed', body: 'x' }, { idempotencyKey: 'k1', correlationId: 'c' })).messageId,
    ).toBe(messageId);
  } finally {
    await mailbox.close();
  }
});

test('watch without a listener is refused with the valid form; with one it opens (sync first)', async () => {
  const mailbox = await memoryMailbox();
  try {
    const { '@b': b } = await registerAgents(mailbox, ['@b']);
    const error = await rejectionOf(b.watch(undefined as never));
    expect(error).toBeInstanceOf(MailboxError);
    expect(error.envelope).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'listener',
      message: expect.stringContaining('watch takes a function called with each wake stream event'),
    });
    const events: string[] = [];
    const stop = await b.watch((event) => events.push(event.event));
    expect(events[0]).toBe('sync');
    await stop();
  } finally {
    await mailbox.close();
  }
});

// createMailbox({ dataDir }) naming a file rejected with SQLite's own 'unable to open database file' (a SqliteError,
// no envelope, no word of dataDir); mailbox serve already said what was wrong. Checked the same way now.
test('a dataDir that is a file is refused as configuration, naming dataDir; the file is left as it was', async () => {
  const dir = tempDir('mailbox-datadir-file-');
  const file = path.join(dir, 'notes.txt');
  fs.writeFileSync(file, 'mine');
  const error = await rejectionOf(createMailbox({ dataDir: file, adminToken: 'a'.repeat(32) }, { logger: silentLogger }));
  expect(error).toBeInstanceOf(MailboxError);
  expect(error.envelope).toEqual({
    error: 'Invalid configuration',
    code: 'VALIDATION_FAILED',
    field: 'dataDir',
    message: `dataDir='${file}' cannot be a directory: ${file} is a file; set dataDir to a directory path. Nothing was opened.`,
  });
  expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
  expect(fs.readFileSync(file, 'utf8')).toBe('mine');
});

// A value createMailbox refused was said in the environment's words: createMailbox({ dataDir: 5 }) was told
// "MAILBOX_DATA_DIR='5' is not valid: set MAILBOX_DATA_DIR to a directory path" (field MAILBOX_DATA_DIR), a variable its
// caller never set, and a number shown as the text '5'; strictRecipients: 'yes' was told that 'yes' is a valid form; a
// malformed redisUrl was refused only after the SQLite log had been made in dataDir.
test.each([
  [
    { dataDir: 5 },
    'dataDir',
    'createMailbox option dataDir: 5 (a number) is not valid: give dataDir a directory path (default ./data).',
  ],
  [
    { strictRecipients: 'yes' },
    'strictRecipients',
    "createMailbox option strictRecipients: 'yes' is not valid: give strictRecipients true or false.",
  ],
  [
    { awaitProjectionMs: '2s' },
    'awaitProjectionMs',
    "createMailbox option awaitProjectionMs: '2s' is not valid: give awaitProjectionMs an integer number of milliseconds, 0 or more and at most 2147483647 ms (about 24.8 days, the longest timer Node.js keeps), written in plain decimal digits: did you mean 2000?",
  ],
  [
    { adminToken: 12345 },
    'adminToken',
    'createMailbox option adminToken: a number is not valid: give adminToken 32 or more characters',
  ],
  [
    { views: 'memory', redisUrl: 'redis://127.0.0.1:1' },
    'views',
    "views='memory' is set with Redis (redisUrl), where the views live in Redis: leave views out.",
  ],
  [{ redisUrl: 'http://x' }, 'redisUrl', "redisUrl 'http://x' is not a Redis URL; use redis://host:6379"],
  [
    { eventStoreUrl: 'postgres://x', views: 'sqlite' },
    'eventStoreUrl',
    "eventStoreUrl='postgres://x' is not supported: use esdb://host:2113?tls=false (or kurrentdb://), sqlite:<file>, memory:, or leave it out for SQLite in dataDir.",
  ],
])('createMailbox(%j) is refused naming the option (%s) and its valid form; nothing is made', async (options, field, start) => {
  const dir = tempDir('mailbox-option-value-');
  const dataDir = path.join(dir, 'data');
  const error = await rejectionOf(createMailbox({ dataDir, ...options } as never, { logger: silentLogger }));
  expect(error).toBeInstanceOf(MailboxError);
  expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', error: 'Invalid configuration', field });
  expect(error.message.startsWith(start)).toBe(true);
  expect(error.message).toMatch(/ Nothing was opened\.$/);
  expect(error.message).not.toMatch(/MAILBOX_|\bunset\b/);
  expect(fs.readdirSync(dir)).toEqual([]); // no data dir, no log
});

// as(5) rejected with Node's TypeError ERR_INVALID_ARG_TYPE from the token hash (no envelope, no word of as).
test('as() given a token that is not a string is refused UNAUTHENTICATED, saying what it takes; nothing written', async () => {
  const mailbox = await memoryMailbox();
  try {
    await registerAgents(mailbox, ['@a', '@b', '@c']);
    const before = (await allEvents(mailbox)).length;
    for (const [token, type] of [
      [5, 'a number'],
      [{ token: 'x' }, 'an object'],
      [['x'], 'an array'],
    ] as const) {
      const error = await rejectionOf(mailbox.as(token as never));
      expect(error).toBeInstanceOf(MailboxError);
      expect(error.envelope).toEqual({
        error: 'Unauthenticated',
        code: 'UNAUTHENTICATED',
        message: `mailbox.as takes a bearer token as a string, not ${type}: the token registerAgent returned (its 'token'), or the admin token.`,
      });
    }
    expect((await allEvents(mailbox)).length).toBe(before);
  } finally {
    await mailbox.close();
  }
});

test("without adminToken the library's mailbox has no admin: the token a server stored in the data dir is not read", async () => {
  const dir = tempDir('mailbox-no-admin-');
  const stored = 'a'.repeat(20) + 'stored-by-serve-0123456789';
  fs.writeFileSync(path.join(dir, 'admin.token'), `${stored}\n`, { mode: 0o600 }); // as `mailbox serve` keeps it
  const mailbox = await createMailbox({ dataDir: dir }, { logger: silentLogger });
  try {
    const error = await rejectionOf(mailbox.as(stored));
    expect(error).toBeInstanceOf(MailboxError);
    expect(error.envelope.code).toBe('UNAUTHENTICATED');
    expect(await allEvents(mailbox)).toEqual([]); // nothing written
  } finally {
    await mailbox.close();
  }
  // Given the token, the same data dir has an admin: it registers an agent.
  const administered = await createMailbox({ dataDir: dir, adminToken: stored }, { logger: silentLogger });
  try {
    const admin = await administered.as(stored);
    expect((await admin.registerAgent({ identity: '@a' })).identity).toBe('@a');
  } finally {
    await administered.close();
  }
});

// auditEvents handed `after` to the log as given: a page's own nextAfter ('3', as the page says it) read nothing
// ({ events: [], nextAfter: '3' } with events after position 3), as did 'x'; a limit of -1 or 10 ** 9 was 1 or 1000.
test("auditEvents pages on from a page's nextAfter as it is; an after or a limit it cannot read is refused, naming it", async () => {
  const mailbox = await memoryMailbox();
  try {
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x' });
    const { token } = await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity: '@ops', role: 'auditor' });
    const auditor = await mailbox.as(token);
    const all = (await auditor.auditEvents(null, 1000)).events.map((event) => event.position);
    const first = await auditor.auditEvents(null, 2);
    expect(first.nextAfter).toBe(all[1]);
    const next = await auditor.auditEvents(first.nextAfter, 2);
    expect(next.events.map((event) => event.position)).toEqual(all.slice(2, 4));
    expect((await auditor.auditEvents(BigInt(all[1]), 2)).events).toEqual(next.events);
    const before = (await allEvents(mailbox)).length;
    const after = await rejectionOf(auditor.auditEvents('x' as never));
    expect(after.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'after' });
    expect(after.message).toContain("auditEvents: 'after' is a log position, a page's nextAfter as it is");
    for (const limit of [-1, 10 ** 9]) {
      const refused = await rejectionOf(auditor.auditEvents(null, limit));
      expect(refused.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'limit' });
      expect(refused.message).toContain("auditEvents: 'limit' takes a whole number from 1 to 1000");
    }
    expect((await allEvents(mailbox)).length).toBe(before);
  } finally {
    await mailbox.close();
  }
});
