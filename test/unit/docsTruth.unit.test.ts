/**
 * What a new user copies from README.md and docs/*.md names what the code has: each `mailbox ...` command shown in
 * code exists, each MAILBOX_* variable read is documented (and each documented one is read), with its real default.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { TOOLS } from '../../src/adapters/mcp/tools';
import { buildProgram } from '../../src/cli/main';
import { knownVariables, unknownVariables, unknownVariableWarning } from '../../src/cli/commands/envWarnings';
import { configFromEnv, configSchema, ENV_VARIABLES, parseConfig } from '../../src/config';
import { translateStartupError } from '../../src/startupChecks';
import { generateToken } from '../../src/application/tokenHash';
import { HEARTBEAT_ENV, heartbeatSettingsSchema } from '../../src/heartbeat/heartbeatSettings';
import { heartbeatSettingsFromCli } from '../../src/cli/commands/heartbeat';
import { decideNudges } from '../../src/heartbeat/nudgeDecider';
import { CHROMIUM } from '../support/chromium';

const ROOT = path.resolve(__dirname, '../..');
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).map((file) => `docs/${file}`)];
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The code a page shows: fenced blocks and inline code spans (prose such as "the mailbox does" is left out). */
function codeOf(text: string): string[] {
  const blocks = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((match) => match[1]);
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  return [...blocks, ...[...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1])];
}

/** A shell line without its comment ("# a working mailbox on ..."). */
const commandLine = (line: string) => line.replace(/(^|\s)#.*$/, '');
/** `mailbox` where a command starts: a line, a pipe or list, `$(`, or after VAR=value assignments; then its words. */
const COMMAND = /(?:^|[;&|(]\s*)(?:[A-Z_]+=\S*\s+)*mailbox ([a-z][a-z-]*)((?: [^;&|)]*)?)/g;

// The README's own example of a mistyped command, shown to say what the CLI answers to it.
const SHOWN_AS_WRONG = new Set(['heartbaet', 'version']); // each quoted as what a user mistypes

// docs/tasks.md said the sender sees a finished task's outcome with `mailbox task get`: the command is `task show`.
test('every `mailbox <command> [<subcommand>] [--option]` the docs show is a command of the CLI, with its options', () => {
  const program = buildProgram();
  const wrong: string[] = [];
  for (const file of DOCS)
    for (const line of codeOf(read(file)).flatMap((code) => code.split('\n')))
      for (const [, name, rest] of commandLine(line).matchAll(COMMAND)) {
        if (SHOWN_AS_WRONG.has(name)) continue;
        let command = program.commands.find((candidate) => candidate.name() === name);
        if (!command) {
          wrong.push(`${file}: mailbox ${name}`);
          continue;
        }
        const sub = /^ ([a-z][a-z-]*)/.exec(rest)?.[1];
        if (sub && command.commands.length > 0) {
          const found = command.commands.find((candidate: Command) => candidate.name() === sub);
          if (!found) wrong.push(`${file}: mailbox ${name} ${sub}`);
          command = found ?? command;
        }
        const options = new Set([...command.options.map((option) => option.long), '--help']);
        for (const option of rest.match(/(?<![\w-])--[a-z][a-z-]*/g) ?? [])
          if (!options.has(option)) wrong.push(`${file}: mailbox ${name} ${sub ?? ''} ${option}`);
      }
  expect(wrong).toEqual([]);
});

// docs/operators.md's nudge had no tasksWaiting, which every nudge carries (an agent with a task waiting and no
// unread mail is nudged for it): a receiver written from the page did not know the field.
test("docs/operators.md's nudge shows the fields a nudge carries", () => {
  const page = read('docs/operators.md');
  const sample = /A nudge is JSON:\s*```json\n([\s\S]*?)```/.exec(page)![1];
  const now = Date.parse('2030-01-01T12:00:00.000Z');
  const [decision] = decideNudges(
    [
      {
        identity: '@b',
        unread: 2,
        unseen: 0,
        tasksWaiting: 0,
        tasksWaitingSince: null,
        repliesOwed: 0,
        nextReplyDueBy: null,
        byPriority: { low: 0, normal: 1, high: 1 },
        oldestUnreadAt: '2030-01-01T11:00:00.000Z',
        lastActivityAt: '2030-01-01T11:29:00.000Z',
        newestUnreadId: 'm-2',
        lastWakeAt: null,
        retired: false,
      },
    ],
    new Map(),
    now,
    { idleMs: 60_000, cooldownMs: 60_000, wakeGraceMs: 60_000, optedOut: new Set() },
  );
  expect(Object.keys(JSON.parse(sample)).sort()).toEqual(Object.keys(decision.nudge!).sort());
});

// The README's prerequisites named redis-server for `npm test` but not chromium: a new contributor's run skipped the
// /docs and /console browser tests and the README never said why.
test("README's prerequisites name the browser the test suite drives", () => {
  expect(read('README.md')).toContain(`\`${CHROMIUM}\``);
});

/** Each MAILBOX_ name a page gives, less a pattern's prefix (`MAILBOX_HEARTBEAT_*`) and the README's misspelt examples. */
const SHOWN_VARIABLE_AS_WRONG = new Set(['MAILBOX_PROT', 'MAILBOX_TOKN']);
const namedIn = (text: string) => new Set([...text.matchAll(/\bMAILBOX_[A-Z0-9_]*[A-Z0-9]\b(?!_)/g)].map((match) => match[0]));

// MAILBOX_REDIS_SENTINEL_PASSWORD_FILE was read at start (the sentinels' password from a file, as the other secrets)
// and named on no page: an operator with Docker secrets found it only in src/config.ts.
test('every MAILBOX_ variable the mailbox reads is documented, and every one documented is read', () => {
  const named = new Set(DOCS.flatMap((file) => [...namedIn(read(file))]));
  const known = knownVariables();
  expect(known.filter((variable) => !named.has(variable))).toEqual([]);
  expect([...named].filter((variable) => !known.includes(variable) && !SHOWN_VARIABLE_AS_WRONG.has(variable))).toEqual([]);
});

test("README's configuration table gives each server setting's real default", () => {
  const defaults = configSchema.parse({}) as Record<string, unknown>;
  const rows = read('README.md')
    .split('\n')
    .filter((line) => line.startsWith('| `MAILBOX_'))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  const wrong = Object.entries(ENV_VARIABLES).flatMap(([key, variable]) => {
    const row =
      rows.find(([, names]) => names.includes(`\`${variable}\``)) ?? rows.find((cells) => cells.join('|').includes(variable));
    if (!row) return [`${variable}: no row`];
    const value = defaults[key];
    return value === undefined || row[2].includes(`\`${String(value)}\``)
      ? []
      : [`${variable}: says ${row[2]}, is ${String(value)}`];
  });
  expect(wrong).toEqual([]);
});

test("docs/operators.md's heartbeat tables give each setting's real default", () => {
  const page = read('docs/operators.md');
  const defaults = heartbeatSettingsSchema.parse({}) as Record<string, unknown>;
  const forms = (ms: number) =>
    [`${ms}`, `${ms / 1000}s`, `${ms / 60_000}m`].flatMap((form) => [`| ${form} |`, `| \`${form}\` |`]);
  const rowOf = (name: string) => page.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
  const flags: Record<string, string> = {
    intervalMs: '--interval',
    idleMs: '--idle',
    cooldownMs: '--cooldown',
    wakeGraceMs: '--wake-grace',
    stallAfterMs: '--stall-after',
  };
  const rows = Object.entries(HEARTBEAT_ENV).flatMap(([key, variable]) => {
    const row = rowOf(variable!) ?? (flags[key] ? rowOf(flags[key]) : undefined);
    return row && typeof defaults[key] === 'number' ? [{ key, row, value: defaults[key] as number }] : [];
  });
  expect(rows.map(({ key }) => key)).toEqual(expect.arrayContaining([...Object.keys(flags), 'webhookAttempts', 'hookTimeoutMs']));
  expect(rows.filter(({ row, value }) => !forms(value).some((form) => row.includes(form))).map(({ row }) => row)).toEqual([]);
});

// docs/operators.md said a heartbeat setting refused at start is named by "the flag and variable": the refusal names
// the one that gave the value (the flag, which wins when both are set), as typed.
test("docs/operators.md says which name a heartbeat setting's refusal at start gives", () => {
  const refusal = (flags: { interval?: string }, env: NodeJS.ProcessEnv) => {
    try {
      heartbeatSettingsFromCli(flags, env);
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };
  const fromBoth = refusal({ interval: 'abc' }, { MAILBOX_HEARTBEAT_INTERVAL: '2m' });
  expect(fromBoth).toMatch(/^--interval: 'abc' is not a duration/);
  expect(fromBoth).not.toContain('MAILBOX_HEARTBEAT_INTERVAL');
  expect(refusal({}, { MAILBOX_HEARTBEAT_INTERVAL: 'abc' })).toMatch(/^MAILBOX_HEARTBEAT_INTERVAL: must be a duration/);
  const page = read('docs/operators.md').replace(/\s+/g, ' ');
  const sentence = /Invalid values are refused at start[^.]*\./.exec(page)?.[0];
  expect(sentence).toContain('naming the flag, or the variable, that gave the value (the flag when both are set)');
});

/** The files a bench area (`npm run bench -- esdb`) or a test path (`npx jest test/x.test.ts`) runs. */
function sourcesOf(target: string): string[] {
  const base = path.join(ROOT, target.startsWith('test/') ? target : `bench/${target}`);
  if (!fs.existsSync(base)) return fs.existsSync(`${base}.bench.ts`) ? [`${base}.bench.ts`] : [];
  if (fs.statSync(base).isFile()) return [base];
  return fs.readdirSync(base, { recursive: true, encoding: 'utf8' }).map((file) => path.join(base, file));
}

// docs/operators.md said to measure a real EventStoreDB leader with `ESDB_URL=... npm run bench -- esdb`; those
// benchmarks read no ESDB_URL and always ran against the in-repo test double.
test('a variable the docs set for a benchmark or a test is one that benchmark or test reads', () => {
  const given = DOCS.flatMap((file) =>
    [
      ...read(file).matchAll(/\b([A-Z][A-Z0-9_]+)=(?:'[^']*'|\S*) (?:npm run bench -- |node bench\/run\.js |npx jest )(\S+)/g),
    ].map(([, variable, target]) => ({ file, variable, target: target.replace(/[`).,;]+$/, '') })),
  );
  expect(given.length).toBeGreaterThan(0);
  const unread = given.filter(({ variable, target }) => {
    const files = sourcesOf(target);
    return (
      files.length === 0 ||
      !files.some((file) => fs.statSync(file).isFile() && read(path.relative(ROOT, file)).includes(variable))
    );
  });
  expect(unread).toEqual([]);
});

/** bench/'s sources (TypeScript and run.js), relative to the root. */
const benchSources = () =>
  fs
    .readdirSync(path.join(ROOT, 'bench'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|js)$/.test(file) && !file.startsWith('results'))
    .map((file) => `bench/${file}`);
const BENCH_VARIABLE = /\b(?:MAILBOX_)?BENCH_[A-Z0-9_]*[A-Z0-9]\b/g;

// MAILBOX_BENCH_SKIP_EVENT_CHECKS, BENCH_LOAD_SECONDS, BENCH_SERVER_STDOUT and others were read by bench/ and named
// nowhere in bench/README.md: a reader learned them only from the sources.
test("bench/README.md's variables table lists every BENCH_* variable bench/ reads, and each it lists is read", () => {
  const code = benchSources().map(read).join('\n');
  // A name bench/ declares (export const BENCH_ADMIN_TOKEN = ...) is a constant, not a variable.
  const constants = new Set([...code.matchAll(/\bconst ((?:MAILBOX_)?BENCH_[A-Z0-9_]+)\s*=/g)].map((match) => match[1]));
  const used = new Set([...code.matchAll(BENCH_VARIABLE)].map((match) => match[0]).filter((name) => !constants.has(name)));
  const table = new Set(
    read('bench/README.md')
      .split('\n')
      .filter((line) => /^\| `(?:MAILBOX_)?BENCH_/.test(line))
      .map((line) => /`([A-Z0-9_]+)`/.exec(line)![1]),
  );
  expect(used.size).toBeGreaterThan(20);
  expect([...used].filter((name) => !table.has(name)).sort()).toEqual([]);
  expect([...table].filter((name) => !used.has(name)).sort()).toEqual([]);
});

// GET /v1/whoami, POST /v1/messages/read (several ids, read-all), GET /v1/heartbeat, GET /v1/audit/agents and
// GET /v1/audit/series were served and in openapi.json, but no page named them: a reader of the README never met
// whoami or read-all over HTTP.
test('every route of the API is named in the README or a docs page', () => {
  const api = JSON.parse(read('openapi.json')) as { paths: Record<string, object> };
  const pages = DOCS.map(read).join('\n');
  // A route may be named as a template (`/v1/tasks/{id}`) or by example (`/v1/agents/@dave/token`, `/v1/messages/$ID/read`).
  const named = (route: string) =>
    new RegExp(`${route.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/\\s`]+')}(?![\\w/])`).test(pages);
  expect(Object.keys(api.paths).filter((route) => !named(route))).toEqual([]);
});

test("docs/mcp.md's table has a row for every MCP tool, naming each argument it takes", () => {
  const rows = read('docs/mcp.md').split('\n');
  const missing = TOOLS.flatMap((tool) => {
    const row = rows.find((line) => line.startsWith(`| \`${tool.name}\` |`));
    if (!row) return [`${tool.name}: no row`];
    const shape = tool.schema instanceof z.ZodObject ? (tool.schema.shape as Record<string, unknown>) : {};
    return Object.keys(shape)
      .filter((argument) => !row.includes(`\`${argument}\``) && !row.includes(`${argument}?`))
      .map((argument) => `${tool.name}: ${argument}`);
  });
  expect(TOOLS.length).toBe(13);
  expect(missing).toEqual([]);
});

/** A span README quotes in backticks (it may wrap across lines: joined by one space), found by its opening words. */
function quoted(page: string, opening: string): string {
  const start = page.indexOf(`\`${opening}`);
  expect(start).toBeGreaterThanOrEqual(0);
  return page.slice(start + 1, page.indexOf('`', start + 1)).replace(/\s*\n\s*/g, ' ');
}

// The lines README shows as the product's were not held to it: a change of wording would leave the README quoting a
// line that no longer appears (an operator greps the logs for it).
test("the lines README quotes from the product's start-up are the lines it prints", () => {
  const readme = read('README.md');
  const config = parseConfig({ host: '127.0.0.1', port: 7420 });
  const inUse = translateStartupError(Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' }), config);
  expect(quoted(readme, 'mailbox: port 7420')).toBe(`mailbox: ${(inUse as Error).message}`);
  const [misspelt] = unknownVariables({ MAILBOX_TOKN: 'x' });
  expect(quoted(readme, 'MAILBOX_TOKN is not')).toBe(unknownVariableWarning(misspelt));
  const [prot] = unknownVariables({ MAILBOX_PROT: '7421' });
  const [before, after] = quoted(readme, 'MAILBOX_PROT').split(' ... ');
  expect(unknownVariableWarning(prot).startsWith(before)).toBe(true);
  expect(unknownVariableWarning(prot).endsWith(after)).toBe(true);
  expect(quoted(readme, 'mailbox: warning: MAILBOX_PROT')).toBe(`mailbox: warning: ${unknownVariableWarning(prot)}`);
  // "mailbox: MAILBOX_REDIS_URL is set but empty (...): set it to ..., or unset it for no Redis (...)"
  const emptyRedis = quoted(readme, 'mailbox: MAILBOX_REDIS_URL is set but empty').split('...');
  let emptyRefusal = '';
  try {
    configFromEnv({ MAILBOX_REDIS_URL: '' });
  } catch (error) {
    emptyRefusal = `mailbox: ${(error as Error).message}`;
  }
  expect(emptyRefusal.startsWith(emptyRedis[0])).toBe(true);
  for (const part of emptyRedis.slice(1)) expect(emptyRefusal).toContain(part.replace(/^\)/, ''));
  // "generated on first start (53 characters, 256 random bits)"
  expect(readme).toContain('(53 characters, 256 random bits)');
  expect(generateToken('mbx_admin')).toHaveLength(53);
});
