/**
 * Runs `mailbox projections rebuild | status` in process as the CLI runs them (runRebuildCommand, runStatusCommand):
 * captured stdout and stderr, and the exit code they set. One runner for the rebuild tests, which each had their own.
 */
import type { ProjectionsIo } from '../../src/cli/commands/projections';
import { capture } from './auditCli';

export interface ProjectionsRun {
  code: number;
  out: string;
  err: string;
}

export async function runProjections(
  command: (io: ProjectionsIo) => Promise<void>,
  env: NodeJS.ProcessEnv,
  clock?: ProjectionsIo['clock'],
): Promise<ProjectionsRun> {
  const out = capture();
  const err = capture();
  process.exitCode = undefined;
  try {
    await command({ stdout: out.stream, stderr: err.stream, env, ...(clock ? { clock } : {}) });
    return { code: Number(process.exitCode ?? 0), out: out.text(), err: err.text() };
  } finally {
    process.exitCode = undefined; // other suites in this worker expect none
  }
}

/**
 * What the command said on stderr, as the operator reads it: exactly one JSON line, no stack trace, with exit code
 * `code`; that line parsed.
 */
export function theOneLine(run: ProjectionsRun, code: number): Record<string, unknown> {
  expect({ code: run.code, lines: run.err.trim().split('\n').length }).toEqual({ code, lines: 1 });
  expect(run.err).not.toMatch(/\n\s+at /); // no stack trace
  return JSON.parse(run.err) as Record<string, unknown>;
}
