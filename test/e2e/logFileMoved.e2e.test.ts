/**
 * The event log's file deleted, moved or replaced under a running server: SQLite goes on writing into the file it
 * holds open, which is no longer at its path, so every send acknowledged after that was gone at the next start
 * (201 for events nobody would ever read again). Now each command's write is refused 503 UNAVAILABLE saying what
 * happened, nothing is written, /readyz says writes are failing while reads go on, and nothing is created at the path.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { tempDir } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

/** A server on the embedded default in its own data dir (a SQLite log), @a having sent one message to @b. */
async function serving(): Promise<{ server: TestServer; dir: string; tokens: Record<string, string> }> {
  const dir = tempDir();
  server = await startTestServer({ dataDir: dir, eventStoreUrl: undefined });
  const tokens = await server.register(['@a', '@b', '@c']);
  const sent = await server.call('POST', '/v1/messages', {
    token: tokens['@a'],
    body: { to: '@b', subject: 'before', body: 'hello' },
  });
  expect(sent.status).toBe(201);
  return { server, dir, tokens };
}

const LOG_FILES = ['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm'];

async function expectWritesRefused(s: TestServer, tokens: Record<string, string>, dir: string): Promise<void> {
  const before = await s.eventCount(); // read through the server's own connections: the file it still holds
  const send = await s.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@c', subject: 'after', body: 'hello' } });
  expect(send.status).toBe(503);
  expect(send.body).toMatchObject({ code: 'UNAVAILABLE' });
  expect(send.body.message).toContain('deleted, moved or replaced while the server ran');
  expect(send.body.message).toContain('Nothing was written');
  const inbox = await s.call('GET', '/v1/messages', { token: tokens['@b'] });
  expect(inbox.status).toBe(200); // reads go on, from what the server holds
  const read = await s.call('POST', `/v1/messages/${inbox.body.messages[0].messageId}/read`, { token: tokens['@b'] });
  expect(read.status).toBe(503);
  expect(await s.eventCount()).toBe(before);
  const ready = await s.call('GET', '/readyz');
  expect(ready.status).toBe(200); // serving reads: a load balancer keeps it
  expect(ready.body.status).toBe('degraded');
  // As documented: a client validating answers against openapi.json (the schema said status was always 'ready') takes it.
  const documented = (buildOpenApiDocument() as any).paths['/readyz'].get.responses['200'].content['application/json'].schema;
  const validate = new Ajv2020({ strict: false }).compile(documented);
  expect([validate(ready.body), validate.errors]).toEqual([true, null]);
  expect(ready.body.eventStore.writes.failing).toContain('deleted, moved or replaced');
  expect(fs.existsSync(path.join(dir, 'events.sqlite'))).toBe(false); // nothing recreated where the log was
  const c = await s.call('GET', '/v1/messages', { token: tokens['@c'] });
  expect(c.body.messages).toEqual([]);
}

it('refuses writes once the log file was moved away', async () => {
  const { server: s, dir, tokens } = await serving();
  fs.mkdirSync(path.join(dir, 'elsewhere'));
  for (const file of LOG_FILES) {
    if (fs.existsSync(path.join(dir, file))) fs.renameSync(path.join(dir, file), path.join(dir, 'elsewhere', file));
  }
  await expectWritesRefused(s, tokens, dir);
});

it('refuses writes once the log file was deleted', async () => {
  const { server: s, dir, tokens } = await serving();
  for (const file of LOG_FILES) fs.rmSync(path.join(dir, file), { force: true });
  await expectWritesRefused(s, tokens, dir);
});

it('refuses writes once only the WAL was deleted (it holds acknowledged events not yet in the file)', async () => {
  const { server: s, tokens } = await serving();
  fs.rmSync(path.join(s.mailbox.config.dataDir, 'events.sqlite-wal'));
  const send = await s.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@c', subject: 'after', body: 'hello' } });
  expect(send.status).toBe(503);
  expect(send.body.message).toContain('deleted, moved or replaced while the server ran');
});

it('keeps taking writes while its files stay in place (checkpoints included)', async () => {
  const { server: s, tokens } = await serving();
  for (let i = 0; i < 300; i++) {
    const send = await s.call('POST', '/v1/messages', {
      token: tokens['@a'],
      body: { to: '@b', subject: `m${i}`, body: 'x'.repeat(2000) },
    });
    expect(send.status).toBe(201);
  }
  const count = await s.call('GET', '/v1/inbox/count', { token: tokens['@b'] });
  expect(count.body.unread).toBe(301);
});
