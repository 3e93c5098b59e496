/**
 * `mailbox heartbeat --once` as run from a shell beside a running daemon: it opens no port (the
 * daemon's metrics port is taken here), prints exactly its JSON report on stdout, and logs on stderr.
 */
import fs from 'node:fs';
import net from 'node:net';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';

let dataDir: string;
beforeAll(() => {
  ensureBuilt();
  dataDir = tempDir('mailbox-heartbeat-once-');
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('no port, the report alone on stdout, the logs on stderr', async () => {
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: '@b', subject: 'hello', body: 'x' });
  await mailbox.close();

  const daemonPort = net.createServer(); // stands for a running daemon's metrics port
  await new Promise<void>((resolve) => daemonPort.listen(0, '127.0.0.1', () => resolve()));
  const port = (daemonPort.address() as net.AddressInfo).port;
  try {
    const run = await runCli(['heartbeat', '--once', '--wake-grace', '0'], {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_HEARTBEAT_METRICS_PORT: String(port),
    });
    expect(run.code).toBe(0);
    const stdout = run.stdout.trim().split('\n');
    expect(stdout).toHaveLength(1);
    expect(JSON.parse(stdout[0])).toMatchObject({ agents: 3, withUnread: 1, nudged: ['@b'] });
    const logs = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; metrics?: unknown });
    // One tick, no schedule and no metrics port: the log says so, and never "daemon started" with an interval.
    expect(logs.find((entry) => entry.msg === 'heartbeat: ticks on demand only (no schedule)')).toMatchObject({ metrics: null });
    expect(logs.some((entry) => entry.msg === 'heartbeat daemon started' || 'intervalMs' in entry)).toBe(false);
  } finally {
    await new Promise((resolve) => daemonPort.close(resolve));
  }
});

test('an agents file that names an agent twice is refused at start, naming it (not the last entry silently kept)', async () => {
  const file = `${dataDir}/agents-twice.json`;
  fs.writeFileSync(file, '{"@b": {"optOut": true}, "@c": {}, "@b": {"webhook": "http://127.0.0.1:9/nudge"}}');
  const run = await runCli(['heartbeat', '--once', '--agents-file', file], { MAILBOX_DATA_DIR: dataDir });
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr).toContain(`--agents-file ${file} names '@b' twice; give each agent (and each of its settings) once`);
});

test('an agents file that is not UTF-8 is refused at start, naming the byte (not read with U+FFFD in its place)', async () => {
  const file = `${dataDir}/agents-latin1.json`;
  const text = '{"@b": {"webhook": "http://127.0.0.1:9/caf\xe9"}, "@c": {"optOut": true}}';
  fs.writeFileSync(file, Buffer.from(text, 'latin1'));
  const run = await runCli(['heartbeat', '--once', '--agents-file', file], { MAILBOX_DATA_DIR: dataDir });
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(JSON.parse(run.stderr)).toEqual({
    error: 'Invalid configuration',
    code: 'VALIDATION_FAILED',
    message:
      `--agents-file ${file} is not UTF-8: byte 0xE9 at offset ${text.indexOf('\xe9')} is not part of a UTF-8 character; ` +
      'convert it (e.g. iconv -f latin1 -t utf-8) and start again',
    field: '--agents-file',
    offset: text.indexOf('\xe9'),
  });
});
