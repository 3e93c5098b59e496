/**
 * A host that builds its own stdio protocol on the library (an MCP server over stdin/stdout) owns its stdout:
 * createMailbox without a logger wrote its JSON log lines there. They go to stderr now; a given logger still wins.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Runs `script` in a child process on the sources and gives back what it wrote to each stream. */
const run = (script: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['-r', path.join(ROOT, 'test/support/tsRequireHook.js'), '-e', script],
      { cwd: ROOT, timeout: 50_000 },
      (error, stdout, stderr) => {
        if (error && error.code === undefined) reject(error);
        else resolve({ code: child.exitCode, stdout, stderr });
      },
    );
  });

test('createMailbox without a logger writes its log lines to stderr, and nothing to stdout but what the host prints', async () => {
  const { code, stdout, stderr } = await run(
    `require('reflect-metadata');` +
      `const { createMailbox } = require('./src/mailbox.ts');` +
      `(async () => {` +
      `  const mailbox = await createMailbox({ eventStoreUrl: 'memory:', adminToken: 'a'.repeat(32) });` +
      `  const admin = await mailbox.as('a'.repeat(32));` +
      `  const { token: ta } = await admin.registerAgent({ identity: '@a' });` +
      `  await admin.registerAgent({ identity: '@b' });` +
      `  await admin.registerAgent({ identity: '@c' });` +
      `  const a = await mailbox.as(ta);` +
      `  const sent = await a.send({ to: ['@b', '@c'], subject: 's', body: 'x' });` +
      `  mailbox.logger.info({ messageId: sent.messageId }, 'a line from the mailbox logger');` +
      `  await mailbox.close();` +
      `  process.stdout.write('host output only\\n');` +
      `})().catch((error) => { console.error(error); process.exit(1); });`,
  );
  expect(code).toBe(0);
  expect(stdout).toBe('host output only\n');
  const lines = stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; name: string });
  expect(lines).toContainEqual(expect.objectContaining({ name: 'mailbox', msg: 'a line from the mailbox logger' }));
}, 60_000);
