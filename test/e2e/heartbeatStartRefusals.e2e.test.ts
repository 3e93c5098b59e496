/**
 * The heartbeat's settings as `mailbox heartbeat` and `mailbox serve --heartbeat` take them at start: a command hook
 * that cannot run and a metrics port that cannot be listened on are refused before a tick, each in one line naming the
 * flag and the variable, exit code 2, nothing written to the log (an escalation claimed for a hook that cannot run is
 * never tried again); and the server's heartbeat reads the same MAILBOX_* settings as the separate daemon.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { runAuditCli } from '../support/auditCli';
import { ensureBuilt, MAILBOX_BIN, runCli, type CliRun } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { startRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { REDIS_TEST_TIMEOUT_ENV } from '../support/redisDeadline';

const dirs: string[] = [];
/** A data dir where @a wrote to @b and @c; neither message woke anyone, and @b and @c are idle with unread mail. */
async function mailForBAndC(): Promise<string> {
  const made = tempDir('mailbox-heartbeat-refusals-');
  dirs.push(made);
  const mailbox = await createMailbox(
    { dataDir: made, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: '@b', subject: 'for b', body: 'x' });
  await a.send({ to: '@c', subject: 'for c', body: 'x' });
  await mailbox.close();
  return made;
}

let dir: string;
beforeAll(async () => {
  ensureBuilt();
  dir = await mailForBAndC(); // with MAILBOX_WAKE_SLA_MS=0 both messages are due an escalation
});
afterAll(() => {
  for (const made of dirs) fs.rmSync(made, { recursive: true, force: true });
});

const env = () => ({ MAILBOX_DATA_DIR: dir, MAILBOX_WAKE_SLA_MS: '0' });
const once = (args: string[]) => runCli(['heartbeat', '--once', '--idle', '0', '--wake-grace', '0', ...args], env());

/**
 * The events in the log, as `mailbox audit replay --json` prints them (the command run in this process: the log is
 * what is compared, and two CLI starts per case made this file one of the suite's slowest).
 */
async function logLines(): Promise<string[]> {
  const run = await runAuditCli(['replay', '--json', '--no-progress'], { MAILBOX_DATA_DIR: dir });
  expect(run.code).toBe(0);
  return run.stdout.trim().split('\n');
}

/** The one line of a start-up refusal (bin/mailbox.js: "mailbox: ...", exit code 2), no report on stdout. */
function refusal(run: CliRun): string {
  expect(run.code).toBe(2);
  expect(run.stdout).not.toContain('"nudged"'); // the daemon logs on stdout; no tick report there
  const lines = run.stderr.trim().split('\n');
  const last = lines[lines.length - 1];
  expect(last.startsWith('mailbox: ')).toBe(true);
  expect(run.stderr).not.toContain('    at '); // no stack trace
  return last;
}

describe('a command hook that cannot run is refused at start (it failed every nudge and used up the escalations)', () => {
  test.each([
    ['a path that does not exist', () => `${dir}/no-such-hook`, 'does not exist'],
    ['a JSON argv whose command does not exist', () => JSON.stringify([`${dir}/no-such-hook`, '--to', 'ops']), 'does not exist'],
    ['a directory', () => dir, 'is not a file'],
    ['a file that is not executable', () => `${dir}/events.sqlite`, 'is not executable'],
    ['a bare name found on no PATH entry', () => '["no-such-notify-command-xyz"]', 'is on no PATH directory'],
  ])('%s', async (_what, hook, problem) => {
    const before = await logLines();
    const line = refusal(await once(['--hook', hook()]));
    expect(line).toContain('--hook / MAILBOX_HEARTBEAT_HOOK');
    expect(line).toContain(problem);
    expect(await logLines()).toEqual(before); // no escalation claimed, no wake recorded
  });

  // It was refused only after the stores and the nudge publisher were opened: behind a wait for a Redis that is down
  // (up to MAILBOX_STARTUP_RETRY_MS), and with the publisher left open.
  test('it is refused before the heartbeat waits for a Redis that is down, or opens anything', async () => {
    const started = Date.now();
    const run = await runCli(['heartbeat', '--hook', `${dir}/no-such-hook`, '--metrics-port', 'off'], {
      ...env(),
      MAILBOX_REDIS_URL: 'redis://127.0.0.1:1',
      MAILBOX_STARTUP_RETRY_MS: '20000',
    });
    expect(refusal(run)).toContain('--hook / MAILBOX_HEARTBEAT_HOOK');
    expect(run.stdout).not.toContain('event store'); // no store was opened
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  test('a hook that runs is taken: both messages escalated through it and both agents told (the positive control)', async () => {
    // Beside a running server (a mailbox open here): without one no projector keeps the views, and nothing is escalated.
    const server = await createMailbox(
      { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    const run = await once(['--hook', '["/bin/true"]']).finally(() => server.close());
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.unwoken.escalated).toHaveLength(2);
    expect(report).toMatchObject({ nudged: ['@b', '@c'], failed: [] });
  });
});

describe('a metrics port that cannot be listened on is one line naming it and its variable (it read INTERNAL)', () => {
  let taken: net.Server;
  let port: number;
  beforeAll(async () => {
    taken = net.createServer(); // stands for a running daemon's metrics port
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    port = (taken.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => taken.close(resolve)));

  test('mailbox heartbeat: a port in use', async () => {
    const before = await logLines();
    const line = refusal(await runCli(['heartbeat', '--metrics-port', String(port)], env()));
    expect(line).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(line).toContain('--metrics-port / MAILBOX_HEARTBEAT_METRICS_PORT');
    expect(await logLines()).toEqual(before);
  });

  test('mailbox heartbeat: a host that is no address of this machine', async () => {
    const line = refusal(await runCli(['heartbeat', '--metrics-host', 'no-such-host.invalid', '--metrics-port', '0'], env()));
    expect(line).toContain("'no-such-host.invalid'");
    expect(line).toContain('--metrics-host / MAILBOX_HEARTBEAT_METRICS_HOST');
  });

  test('mailbox serve --heartbeat: the same line (it printed a stack trace and exited 1)', async () => {
    const run = await runCli(['serve', '--heartbeat', '--port', '0'], { ...env(), MAILBOX_HEARTBEAT_METRICS_PORT: String(port) });
    const line = refusal(run);
    expect(line).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(line).toContain('MAILBOX_HEARTBEAT_METRICS_PORT');
  });

  // Found before anything is made, as serve's own port in use is: it generated and printed the admin token, made the
  // data dir and its log and views, and only then met the heartbeat's port.
  test('mailbox serve --heartbeat on a fresh data dir: refused before the admin token, the log or the views are made', async () => {
    const fresh = tempDir('mailbox-heartbeat-port-');
    dirs.push(fresh);
    const dataDir = `${fresh}/data`;
    const run = await runCli(['serve', '--heartbeat', '--port', '0'], {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_HEARTBEAT_METRICS_PORT: String(port),
    });
    expect(refusal(run)).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(run.stdout).not.toContain('Admin token');
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  test('mailbox heartbeat: a port in use is refused before it waits for a Redis that is down', async () => {
    const started = Date.now();
    const run = await runCli(['heartbeat', '--metrics-port', String(port)], {
      ...env(),
      MAILBOX_REDIS_URL: 'redis://127.0.0.1:1',
      MAILBOX_STARTUP_RETRY_MS: '20000',
    });
    expect(refusal(run)).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('mailbox serve --heartbeat reads the settings mailbox heartbeat reads', () => {
  interface Served {
    logs: Array<{ msg: string; targets?: string[]; metrics?: string }>;
    stop(): Promise<void>;
  }

  /** `mailbox serve --heartbeat` until its heartbeat says it started (the positive signal); its JSON log lines. */
  function serveWithHeartbeat(env: Record<string, string>): Promise<Served> {
    const child = spawn(process.execPath, [MAILBOX_BIN, 'serve', '--heartbeat', '--port', '0'], {
      env: { PATH: process.env.PATH, MAILBOX_LOG_FORMAT: 'json', MAILBOX_HEARTBEAT_METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const stop = async () => {
      child.kill('SIGTERM');
      await exited;
    };
    return new Promise((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the heartbeat did not start within 20 s: ${output}`));
      }, 20_000);
      const take = (chunk: Buffer) => {
        output += chunk.toString();
        if (!output.includes('"heartbeat daemon started"')) return;
        clearTimeout(timer);
        const logs = output
          .split('\n')
          .filter((line) => line.startsWith('{') && line.endsWith('}'))
          .map((line) => JSON.parse(line));
        resolve({ logs, stop });
      };
      child.stdout!.on('data', take);
      child.stderr!.on('data', take);
    });
  }

  test('MAILBOX_HEARTBEAT_AGENTS_FILE: an agent it opts out is not nudged (the file was ignored: every agent was)', async () => {
    const data = await mailForBAndC();
    const agentsFile = `${data}/agents.json`;
    fs.writeFileSync(agentsFile, JSON.stringify({ '@b': { optOut: true } }));
    const served = await serveWithHeartbeat({
      MAILBOX_DATA_DIR: data,
      MAILBOX_HEARTBEAT_AGENTS_FILE: agentsFile,
      MAILBOX_HEARTBEAT_INTERVAL: '1h', // the tick at start is the only one
      MAILBOX_HEARTBEAT_IDLE: '0',
      MAILBOX_HEARTBEAT_WAKE_GRACE: '0',
    });
    try {
      const started = served.logs.find((entry) => entry.msg === 'heartbeat daemon started')!;
      let lastTick: { verdicts: Record<string, number>; loggedOnly: string[] } | null = null;
      await waitFor(
        async () => {
          lastTick = ((await (await fetch(`${started.metrics}/status`)).json()) as { lastTick: typeof lastTick }).lastTick;
          return lastTick !== null;
        },
        { what: 'a heartbeat tick', timeoutMs: 10_000 },
      );
      expect(lastTick).toMatchObject({ verdicts: { no_mail: 1, opted_out: 1, nudge: 1 }, loggedOnly: ['@c'] });
    } finally {
      await served.stop();
    }
  });

  test('MAILBOX_REDIS_URL: nudges are published on Redis, as the separate daemon does (it had no target at all)', async () => {
    const data = await mailForBAndC();
    const redis = await startRedis();
    try {
      const served = await serveWithHeartbeat({
        MAILBOX_DATA_DIR: data,
        MAILBOX_REDIS_URL: redis.url,
        ...REDIS_TEST_TIMEOUT_ENV,
      });
      await served.stop();
      const started = served.logs.find((entry) => entry.msg === 'heartbeat daemon started')!;
      expect(started.targets).toEqual(['redis']);
    } finally {
      await redis.stop();
    }
  });

  test('a MAILBOX_HEARTBEAT_* value it refuses stops it before it listens, in one line (a stack trace, exit 1, once listening)', async () => {
    const run = await runCli(['serve', '--heartbeat', '--port', '0'], {
      MAILBOX_DATA_DIR: dir,
      MAILBOX_HEARTBEAT_INTERVAL: 'often',
    });
    const line = refusal(run);
    expect(line).toContain('MAILBOX_HEARTBEAT_INTERVAL');
    expect(run.stdout + run.stderr).not.toContain('mailbox listening');
  });

  test('a hook that cannot run stops it before it listens', async () => {
    const run = await runCli(['serve', '--heartbeat', '--port', '0'], {
      MAILBOX_DATA_DIR: dir,
      MAILBOX_HEARTBEAT_HOOK: `${dir}/no-such-hook`,
    });
    expect(refusal(run)).toContain('--hook / MAILBOX_HEARTBEAT_HOOK');
    expect(run.stdout + run.stderr).not.toContain('mailbox listening');
  });
});
