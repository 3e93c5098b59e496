/**
 * An operator tailing `mailbox serve`'s log saw nothing of what admins did: an agent registered, given a new token or
 * retired left no line at info. Each is now said once, at the default level, with the agent, who did it and the log
 * position of the event written; never a token nor its hash. Agents' sends and reads stay out of it (their volume).
 */
import path from 'node:path';
import { ensureBuilt, runCli, startCli, type StartedCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';
import { hashToken } from '../../src/application/tokenHash';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';

beforeAll(() => ensureBuilt());

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const linesOf = (server: StartedCli): LogLine[] =>
  server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

const adminLines = (server: StartedCli) => linesOf(server).filter((line) => line.adminAction !== undefined);

test('admin actions are logged once at info with the agent and the log position; sends and reads are not; no token', async () => {
  const dataDir = path.join(tempDir('mailbox-admin-log-'), 'data');
  // The defaults an operator runs with: MAILBOX_LOG_LEVEL unset (info); JSON lines to read them here.
  const server = startCli(['serve'], {
    MAILBOX_DATA_DIR: dataDir,
    MAILBOX_PORT: '0',
    MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    MAILBOX_LOG_FORMAT: 'json',
  });
  try {
    await waitFor(() => linesOf(server).some((line) => String(line.msg).startsWith('mailbox listening on')), {
      timeoutMs: 30_000,
      what: 'the server listening',
    });
    const url = String(linesOf(server).find((line) => String(line.msg).startsWith('mailbox listening on'))!.url);
    const env = { MAILBOX_URL: url, MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN };
    const tokens: Record<string, string> = {};
    for (const identity of ['@a', '@b', '@c']) {
      const added = await runCli(['agent', 'add', identity, '--json'], env);
      expect(added.code).toBe(0);
      tokens[identity] = (JSON.parse(added.stdout) as { token: string }).token;
    }
    const rotated = await runCli(['agent', 'token', '@a', '--json'], env);
    expect(rotated.code).toBe(0);
    const old = tokens['@a'];
    tokens['@a'] = (JSON.parse(rotated.stdout) as { token: string }).token;

    // Agents' own work: a send to two, a read of the inbox, a mark read.
    const call = (token: string, method: string, route: string, body?: unknown) =>
      fetch(`${url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const sent = await call(tokens['@a'], 'POST', '/v1/messages', { to: ['@b', '@c'], subject: 'hello', body: 'x' });
    expect(sent.status).toBe(201);
    const { messageId } = (await sent.json()) as { messageId: string };
    expect((await call(tokens['@b'], 'GET', '/v1/messages')).status).toBe(200);
    expect((await call(tokens['@b'], 'POST', `/v1/messages/${messageId}/read`)).status).toBe(200);

    const retired = await runCli(['agent', 'retire', '@c'], env);
    expect(retired.code).toBe(0);
    const again = await runCli(['agent', 'retire', '@c'], env);
    expect(again.code).toBe(0);
    // The last action's line is the positive signal: every line before it is written.
    await waitFor(() => adminLines(server).length === 6, { timeoutMs: 10_000, what: 'six admin lines' });

    const said = adminLines(server).map(({ level, msg, adminAction, by, identity, position }) => [
      level,
      msg,
      adminAction,
      by,
      identity,
      position,
    ]);
    // The send and @b's receipt are between the rotation and the retirement (positions 5 to 7).
    expect(said).toEqual([
      [30, 'agent @a registered by admin (at log position 1)', 'registered', 'admin', '@a', '1'],
      [30, 'agent @b registered by admin (at log position 2)', 'registered', 'admin', '@b', '2'],
      [30, 'agent @c registered by admin (at log position 3)', 'registered', 'admin', '@c', '3'],
      [30, 'agent @a given a new token by admin (at log position 4)', 'given a new token', 'admin', '@a', '4'],
      [30, 'agent @c retired by admin (at log position 8)', 'retired', 'admin', '@c', '8'],
      [30, 'agent @c already retired by admin (nothing written)', 'already retired', 'admin', '@c', null],
    ]);
    expect(adminLines(server).map((line) => line.role)).toEqual(['agent', 'agent', 'agent', undefined, undefined, undefined]);
    // Nothing of the agents' sends and reads at info: no line names the message, its subject or a route.
    const log = server.stdout() + server.stderr();
    expect(log).not.toContain(messageId);
    expect(log).not.toContain('/v1/messages');
    expect(log).not.toContain('hello');
    // No token, no token hash, no admin token.
    for (const token of [old, ...Object.values(tokens), ADMIN_TOKEN]) {
      expect(log).not.toContain(token);
      expect(log).not.toContain(hashToken(token));
    }
    expect(log).not.toContain('mbx_');
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  // Each position said is the event of that action in the log.
  const db = openSqliteDatabase(path.join(dataDir, 'events.sqlite'), undefined, { readonly: true });
  try {
    const typeAt = (position: number) =>
      (db.prepare('SELECT type FROM events WHERE position = ?').get(position) as { type: string } | undefined)?.type;
    expect([1, 2, 3, 4, 8].map(typeAt)).toEqual([
      'AgentRegistered',
      'AgentRegistered',
      'AgentRegistered',
      'AgentTokenRotated',
      'AgentRetired',
    ]);
  } finally {
    db.close();
  }
}, 90_000);
