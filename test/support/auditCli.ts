/** Runs `mailbox audit ...` in process with captured stdout/stderr and the exit code it set. */
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { registerAuditCommands } from '../../src/cli/commands/audit';

export function capture() {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return { stream, text: () => chunks.join('') };
}

export async function runAuditCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const out = capture();
  const err = capture();
  const program = new Command().exitOverride();
  registerAuditCommands(program, { stdout: out.stream, stderr: err.stream, env });
  process.exitCode = undefined;
  await program.parseAsync(['node', 'mailbox', 'audit', ...args]);
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, stdout: out.text(), stderr: err.text() };
}
