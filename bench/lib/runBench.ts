/**
 * Entry point of every *.bench.ts script: runs the body, prints the summary,
 * then the one JSON line bench/run.js collects. A failure still prints its
 * JSON line (with `error`) and exits non-zero, so the runner never loses it.
 */
import 'reflect-metadata';
import { loadAverage } from './cpu';
import { BenchReport } from './report';
import { QUICK } from './scale';
import { nowMs } from './timing';

export function runBench(name: string, body: (report: BenchReport) => Promise<void>): void {
  const report = new BenchReport(name);
  const started = nowMs();
  report.log(`# ${name}${QUICK ? ' (quick mode: sizes / 10)' : ''}`);
  // Other processes' load skews wall-clock figures; record it beside them.
  report.info.loadAverageAtStart = loadAverage();
  body(report).then(
    () => finish(report, started),
    (error: unknown) => finish(report, started, error),
  );
}

function finish(report: BenchReport, started: number, error?: unknown): void {
  report.note('load average (start -> end)', `${report.info.loadAverageAtStart} -> ${loadAverage()}`);
  delete report.info.loadAverageAtStart;
  if (error !== undefined) report.log(`  FAILED: ${error instanceof Error ? error.stack : String(error)}`);
  const result = report.result(nowMs() - started, error);
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(error === undefined ? 0 : 1));
}
