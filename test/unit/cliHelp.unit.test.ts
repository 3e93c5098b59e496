/** Help text a new user pastes from: the quick start includes the token step, examples are shell-safe, no dead options. */
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main';

function helpOf(...path: string[]): string {
  let command: Command = buildProgram();
  for (const name of path) command = command.commands.find((c) => c.name() === name)!;
  let text = '';
  command.configureOutput({ writeOut: (s) => (text += s) });
  command.outputHelp();
  return text;
}

test('mailbox --help: the quick start registers agents and sets MAILBOX_TOKEN before sending', () => {
  const help = helpOf();
  const steps = ['mailbox serve', 'mailbox agent add @a', 'export MAILBOX_TOKEN=', 'mailbox send @b'].map((step) =>
    help.indexOf(step),
  );
  expect(steps.every((index) => index >= 0)).toBe(true);
  expect(steps).toEqual([...steps].sort((a, b) => a - b));
});

test("send --help quotes 'AGENT:*' (an unquoted * is a shell glob)", () => {
  const help = helpOf('send');
  expect(help).toContain("mailbox send 'AGENT:*'");
  expect(help).not.toMatch(/send AGENT:\*/);
});

test('mcp --help offers no --json (stdout is the protocol); audit verify --help lists no --url', () => {
  const mcp = helpOf('mcp');
  expect(mcp).toContain('--token');
  expect(mcp).not.toContain('--json');
  const verify = helpOf('audit', 'verify');
  expect(verify).toContain('--json');
  expect(verify).not.toContain('--url');
});

test('agent token --help says what it does', () => {
  expect(helpOf('agent', 'token')).toMatch(/new token[\s\S]*old\s+token stops working/);
});

test('projections status --help names every field it prints, leftoverGenerations with what drops them', () => {
  const help = helpOf('projections', 'status');
  const fields = ['file', 'namespace', 'viewsBuilt', 'activeGeneration', 'checkpoint', 'logHead', 'upToDate'];
  for (const field of [...fields, 'viewsLogIdentity', 'logIdentity', 'viewsOfThisLog', 'liveWriter', 'note'])
    expect(help).toMatch(new RegExp(`\\b${field}\\b`));
  expect(help).toMatch(/leftoverGenerations[^;]*killed[^;]*dropped by the next\s+`mailbox projections rebuild`/);
});
