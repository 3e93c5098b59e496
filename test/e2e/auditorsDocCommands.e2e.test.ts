/**
 * docs/auditors.md's command block was checked by nobody: `mailbox audit replay --from 1200 --type
 * ReceiptRead,MessageArchived` exited 1 on any mailbox of fewer than 1200 events, with a JSON error where the block
 * promised a replay and said nothing of it. Each line of the page's sh blocks is run here as a reader runs it (through
 * sh, as `mailbox`, in a working directory of its own) against an embedded mailbox in a temp dir, and exits as the page
 * says: 0, or the code its comment names. A line the page adds needs its entry below (what it exits with on this log).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, MAILBOX_BIN, ROOT, runOf, type CliRun } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';

/** Each line of the page's sh blocks, by its command (the comment left out): its exit code on the log made below. */
const EXPECTED: Record<string, { code: number; why: string }> = {
  'mailbox audit replay': { code: 0, why: 'the whole log' },
  'mailbox audit replay --json > log.jsonl': { code: 0, why: 'the whole log, as JSON lines in the file' },
  'mailbox audit replay --from 1200 --type ReceiptRead,MessageArchived': { code: 1, why: 'the log ends before #1200' },
  'mailbox audit replay --stream mailbox-message-<id>': { code: 0, why: "the message's stream" },
  'mailbox audit message <messageId>': { code: 0, why: 'its story, nothing contradicting itself' },
  'mailbox audit agent @b': { code: 0, why: "@b's timeline" },
  'mailbox audit unwoken --sla 30s': { code: 1, why: 'the message woke nobody (no one was listening) a year ago' },
  'mailbox audit verify': { code: 0, why: "the views are the server's, built from this log: no drift" },
};

/** The lines of the page's ```sh blocks that run a command: `[command, comment]`. */
function shLines(page: string): Array<[string, string]> {
  return [...page.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
    .flatMap((block) => block[1].split('\n'))
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
    .map((line) => {
      const comment = /\s#\s(.*)$/.exec(line);
      return [(comment ? line.slice(0, comment.index) : line).trim(), comment?.[1] ?? ''];
    });
}

let dataDir: string;
let messageId: string;
let shims: string;
let head: string;

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('mailbox-auditors-doc-');
  // A clock a year back: the message is long past any SLA (the unwoken line's answer does not depend on the test's pace).
  const clock = { now: () => new Date('2025-06-01T12:00:00.000Z') };
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }), clock },
  );
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  ({ messageId } = await a.send({ to: ['@b', '@c'], subject: 'standup', body: 'at 10' }));
  await b.markRead({ messageId });
  await c.archive(messageId);
  head = String(await mailbox.eventStore.headPosition());
  await mailbox.close();
  // `mailbox` as a reader has it on PATH: this checkout's bin/mailbox.js.
  shims = tempDir('mailbox-auditors-doc-bin-');
  fs.writeFileSync(path.join(shims, 'mailbox'), `#!/bin/sh\nexec "${process.execPath}" "${MAILBOX_BIN}" "$@"\n`, { mode: 0o755 });
});

/** Runs `line` through sh in `cwd`, with `mailbox` on PATH and the data dir as the page's commands read it. */
function runLine(line: string, cwd: string): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const env = { ...base, PATH: `${shims}:${process.env.PATH}`, MAILBOX_DATA_DIR: dataDir };
  return runOf(spawn('sh', ['-c', line], { cwd, env }));
}

const page = fs.readFileSync(path.join(ROOT, 'docs/auditors.md'), 'utf8');

test('every command line of its sh blocks has its expected exit here, and each listed one is on the page', () => {
  expect(shLines(page).map(([command]) => command)).toEqual(Object.keys(EXPECTED));
});

test.each(shLines(page))('%s  (# %s) exits as the page says', async (command, comment) => {
  const expected = EXPECTED[command];
  expect(expected).toBeDefined();
  // A line that exits other than 0 says so in its comment (`exit 1 while ...`, `exit 1 when any`).
  if (expected.code !== 0) expect(comment).toMatch(new RegExp(`\\bexit ${expected.code}\\b`));
  const cwd = tempDir('mailbox-auditors-doc-cwd-');
  const line = command.replace(/<id>|<messageId>/g, messageId);
  const before = fs.readdirSync(dataDir).sort();
  const run = await runLine(line, cwd);
  expect([run.code, run.code === expected.code ? 'as expected' : run.stderr]).toEqual([expected.code, 'as expected']);
  // One clear answer, never a stack trace nor an error envelope for what the page shows as a normal run.
  expect(run.stderr).not.toMatch(/^\{"error"|\n\s+at /m);
  expect(fs.readdirSync(dataDir).sort()).toEqual(before); // the audit tools only read
  if (command.includes('> log.jsonl')) {
    const lines = fs.readFileSync(path.join(cwd, 'log.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((text) => (JSON.parse(text) as { type: string }).type)).toContain('MessageSent');
  }
  if (command.startsWith('mailbox audit replay --from 1200'))
    expect(run.stderr).toBe(
      `0 events shown (from position 1200, --type ReceiptRead,MessageArchived): the log ends at position ${head}. ` +
        `Give --from ${head} or lower, or run it again once the log has grown.\n`,
    );
});
