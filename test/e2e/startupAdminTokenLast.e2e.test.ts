/**
 * A first `mailbox serve` without MAILBOX_ADMIN_TOKEN generates the admin token, stores it in <data dir>/admin.token
 * and prints it once: only once its stores have opened. It was generated, written and printed before they were, so a
 * start then refused on them (a read-only log, another mailbox serving the data dir) had already said "Admin token
 * (generated now ...)" and left an admin.token that no running server took, above its refusal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli, startCli } from '../support/builtCli';
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { makeReadOnly, READ_ONLY_SKIPPED } from '../support/readOnlyFile';

beforeAll(() => ensureBuilt());

/** A data dir holding an event log with one agent, and nothing else (no views file, no admin.token). */
async function dataDirWithLog(): Promise<{ dataDir: string; log: string }> {
  const dataDir = path.join(tempDir('mailbox-token-last-'), 'data');
  const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' });
  await (await mailbox.as(ADMIN_TOKEN)).registerAgent({ identity: '@a' });
  await mailbox.close();
  for (const name of fs.readdirSync(dataDir)) if (name !== 'events.sqlite') fs.rmSync(path.join(dataDir, name));
  return { dataDir, log: path.join(dataDir, 'events.sqlite') };
}

test('a read-only event log: the one line and exit code 2, no admin token printed or stored', async () => {
  const { dataDir, log } = await dataDirWithLog();
  const undo = makeReadOnly(log);
  if (undo === null) {
    process.stderr.write(READ_ONLY_SKIPPED);
    return;
  }
  try {
    const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
    expect(run.code).toBe(2);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mailbox: MAILBOX_DATA_DIR=.*read-only/);
    expect(run.stdout).not.toContain('Admin token');
    expect(run.stdout).not.toContain('mbx_admin_');
    expect(run.stdout).not.toContain('"admin token"');
    expect(fs.existsSync(path.join(dataDir, 'admin.token'))).toBe(false);
  } finally {
    undo();
  }
  // Writable again: this start generates the token, stores it and prints it, and serves with it.
  const server = startCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
  try {
    const url = await listeningUrl(server.stdout);
    const stored = fs.readFileSync(path.join(dataDir, 'admin.token'), 'utf8').trim();
    expect(server.stdout()).toContain(`Admin token (generated now and shown only this once; stored 0600 in `);
    expect(server.stdout()).toContain(`  ${stored}\n`);
    const agents = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${stored}` } });
    expect(agents.status).toBe(200);
    expect(((await agents.json()) as { agents: { identity: string }[] }).agents.map((agent) => agent.identity)).toEqual(['@a']);
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
});

test('a second serve on a data dir served with MAILBOX_ADMIN_TOKEN: refused, no admin token printed or stored', async () => {
  const dataDir = path.join(tempDir('mailbox-token-last-'), 'data');
  const first = startCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN });
  try {
    const url = await listeningUrl(first.stdout);
    const second = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
    expect(second.code).toBe(2);
    const lines = second.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mailbox: another mailbox \(pid \d+, since [^)]+\) is serving the views file /);
    expect(second.stdout).not.toContain('Admin token');
    expect(second.stdout).not.toContain('mbx_admin_');
    // No admin.token beside the running server: the CLI's admin commands would have read it, a token it refuses.
    expect(fs.existsSync(path.join(dataDir, 'admin.token'))).toBe(false);
    const agents = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(agents.status).toBe(200);
  } finally {
    first.child.kill('SIGTERM');
    await first.exited;
  }
});

/** The URL a starting server says it listens on, once it says it. */
async function listeningUrl(stdout: () => string): Promise<string> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    const listening = /"mailbox listening on (http:\/\/[^ ]+) /.exec(stdout());
    if (listening) return listening[1];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the server did not listen within 20 s: ${stdout()}`);
}
