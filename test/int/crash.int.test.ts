/**
 * Acceptance (issue 2): a send acknowledged by the SQLite mailbox survives the
 * process being killed right after the acknowledgement. The child is killed
 * with SIGKILL (no shutdown hooks, no close) as soon as it prints the result;
 * a fresh createMailbox on the same directory must show the messages with
 * exact counts.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, silentLogger, tempDir } from '../support/fixtures';

const ROOT = path.resolve(__dirname, '../..');

interface ChildLine {
  kind: string;
  result?: { messageId: string; recipients: string[]; sentAt: string };
  tokens?: Record<string, string>;
  message?: string;
}

/** Starts the child and resolves each JSON line as it arrives; `kill` sends SIGKILL and waits for the exit. */
function startChild(dir: string) {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['-r', path.join(ROOT, 'test/support/tsRequireHook.js'), path.join(ROOT, 'test/support/crashChild.ts'), dir],
    { cwd: ROOT, stdio: 'pipe' },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  );
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async next(): Promise<ChildLine> {
      const { value, done } = await lines.next();
      if (done) throw new Error(`child exited before printing a result; stderr: ${stderr}`);
      const line = JSON.parse(value) as ChildLine;
      if (line.kind === 'error') throw new Error(`child failed: ${line.message}`);
      return line;
    },
    async kill() {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

describe('crash durability (SQLite, SIGKILL right after the acknowledgement)', () => {
  let dir: string;
  let mailbox: Mailbox | null = null;

  beforeEach(() => {
    dir = tempDir('mailbox-crash-');
  });
  afterEach(async () => {
    await mailbox?.close();
    mailbox = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('killed after the first acknowledged send: the message is there after restart, counts exact', async () => {
    const child = startChild(dir);
    const first = await child.next();
    expect(await child.kill()).toBe('SIGKILL'); // killed immediately, before it could do anything else

    // No clean close happened: the acknowledged write sits in the WAL, which the next open must recover.
    expect(fs.existsSync(path.join(dir, 'events.sqlite-wal'))).toBe(true);
    const raw = openSqliteDatabase(path.join(dir, 'events.sqlite'), undefined, { readonly: true });
    expect(raw.prepare('PRAGMA journal_mode').get()).toMatchObject({ journal_mode: 'wal' });
    raw.close();

    mailbox = await createMailbox(
      { eventStoreUrl: `sqlite:${dir}/events.sqlite`, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: silentLogger },
    );
    const tokens = first.tokens!;
    const b = await mailbox.as(tokens['@b']);
    const c = await mailbox.as(tokens['@c']);
    const a = await mailbox.as(tokens['@a']);
    const unread = await b.listMessages({ status: 'unread' });
    expect(unread.messages.map((m) => m.messageId)).toContain(first.result!.messageId);
    const detail = await b.getMessage(first.result!.messageId);
    expect(detail).toMatchObject({
      from: '@a',
      to: '@b',
      subject: 'acknowledged direct',
      body: 'must survive',
      priority: 'high',
      sentAt: first.result!.sentAt,
      readAt: null,
    });

    // The broadcast may or may not have been acknowledged before the kill; whatever the log holds, counts match it exactly.
    const events = await mailbox.eventStore.readAll(null, 1000);
    const broadcasts = events.filter((e) => e.type === 'MessageSent' && e.data.to === 'AGENT:*');
    expect(broadcasts.length).toBeLessThanOrEqual(1);
    const extra = broadcasts.length; // 0 or 1, and if 1 then delivered to both B and C atomically
    expect(events.filter((e) => e.type === 'BroadcastDelivered')).toHaveLength(2 * extra);
    expect(await b.unreadCount()).toMatchObject({
      unreadCount: 1 + extra,
      unread: 1 + extra,
      byPriority: { low: 0, normal: extra, high: 1 },
    });
    expect((await c.unreadCount()).unreadCount).toBe(extra);
    expect((await a.unreadCount()).unreadCount).toBe(0);
    expect(unread.unreadCount).toBe(1 + extra);

    // The restarted mailbox keeps working on the same file.
    await b.markRead({ messageId: first.result!.messageId });
    expect((await b.unreadCount()).unreadCount).toBe(extra);
  });

  it('killed after both acknowledgements: the direct message and the broadcast (to B and C) both survive', async () => {
    const child = startChild(dir);
    const first = await child.next();
    const second = await child.next();
    expect(await child.kill()).toBe('SIGKILL');

    mailbox = await createMailbox(
      { eventStoreUrl: `sqlite:${dir}/events.sqlite`, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: silentLogger },
    );
    const tokens = first.tokens!;
    const [a, b, c] = await Promise.all(['@a', '@b', '@c'].map((id) => mailbox!.as(tokens[id])));
    expect(second.result!.recipients.sort()).toEqual(['@b', '@c']);
    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([
      second.result!.messageId,
      first.result!.messageId,
    ]);
    expect((await c.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([second.result!.messageId]);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 2, unread: 2, byPriority: { low: 0, normal: 1, high: 1 } });
    expect(await c.unreadCount()).toMatchObject({ unreadCount: 1, unread: 1, byPriority: { low: 0, normal: 1, high: 0 } });
    expect((await a.unreadCount()).unreadCount).toBe(0);
    expect((await a.listMessages({ box: 'outbox' })).messages).toHaveLength(2);
  });
});
