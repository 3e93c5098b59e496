/**
 * The SQLite views owner lock (sqliteViewsOwnerLock.ts) in one process: the views' owner holds it from open to close,
 * a second owner of the same file is refused before it opens the file, a reader (not an owner) is never refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ThreadedSqliteProjectionStore } from '../../src/adapters/projections/threadedSqliteProjectionStore';
import { ViewsFileInUse } from '../../src/adapters/projections/sqliteViews/sqliteViewsOwnerLock';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { openPipeline } from '../../src/compositionRoot';
import { parseConfig } from '../../src/config';
import { createMailbox } from '../../src/mailbox';
import { StartupError } from '../../src/startupError';
import pino from 'pino';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';

let dir: string;
beforeEach(() => {
  dir = tempDir('views-owner-');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const open = (file: string, ownerLock: boolean) =>
  ThreadedSqliteProjectionStore.open(file, new InProcessWakeBus(), { ownerLock });

test('a second owner is refused with who holds it; a reader is not; once the owner closes, another may own the file', async () => {
  const file = path.join(dir, 'views.sqlite');
  const owner = await open(file, true);
  const refusal = await open(file, true).then(
    () => null,
    (error: unknown) => error,
  );
  expect(refusal).toBeInstanceOf(ViewsFileInUse);
  expect((refusal as ViewsFileInUse).message).toMatch(
    new RegExp(
      `^another mailbox in this process \\(pid ${process.pid}, since \\S+\\) is serving the views file .*views\\.sqlite`,
    ),
  );
  const reader = await open(file, false);
  expect(await reader.checkpoint()).toBeNull();
  await reader.close();
  await owner.close();
  const next = await open(file, true);
  expect(await next.checkpoint()).toBeNull();
  await next.close();
});

test('two files in one directory each have their own owner', async () => {
  const a = await open(path.join(dir, 'a.views.sqlite'), true);
  const b = await open(path.join(dir, 'b.views.sqlite'), true);
  await Promise.all([a.close(), b.close()]);
});

test('the heartbeat daemon with --projector on owns the views as a server does: refused while a server runs; a reader is not', async () => {
  const config = { eventStoreUrl: `sqlite:${dir}/events.sqlite`, adminToken: ADMIN_TOKEN, logLevel: 'silent' as const };
  const logger = pino({ level: 'silent' });
  const server = await createMailbox(config);
  try {
    const refusal = await openPipeline(parseConfig(config), logger, 'on').then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(StartupError); // one line, exit code 2
    expect((refusal as Error).message).toMatch(
      /^another mailbox in this process \(pid \d+, since \S+\) is serving the views file /,
    );
    const reader = await openPipeline(parseConfig(config), logger, 'auto'); // the daemon's default: reads, projects nothing
    expect(reader.runsProjector).toBe(false);
    await reader.close();
  } finally {
    await server.close();
  }
  const alone = await openPipeline(parseConfig(config), logger, 'on'); // no server: the daemon is the one projector
  await expect(createMailbox(config)).rejects.toMatchObject({ code: 'UNAVAILABLE', envelope: { error: 'Data dir in use' } });
  await alone.close();
});

test('a views file in a directory that does not exist yet: the owner makes it, as the store does', async () => {
  const store = await open(path.join(dir, 'not', 'yet', 'views.sqlite'), true);
  expect(fs.existsSync(path.join(dir, 'not', 'yet', 'views.sqlite.owner-lock'))).toBe(true);
  await store.close();
});
