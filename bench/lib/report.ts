/**
 * What a benchmark reports: named figures with units and optional targets.
 * A benchmark prints a human-readable summary, then exactly one JSON line
 * last (bench/run.js parses the last line of stdout).
 */
import { round, type Summary } from './stats';
import { QUICK } from './scale';

export interface Target {
  /** 'max': the value must be at most `value` (latencies); 'min': at least (throughputs). */
  kind: 'max' | 'min';
  value: number;
}

export interface Metric {
  name: string;
  value: number;
  unit: string;
  target?: Target;
  ok?: boolean;
  /** Supporting numbers: per-run values, percentiles, sizes. */
  detail?: Record<string, unknown>;
}

export interface BenchResult {
  bench: string;
  quick: boolean;
  ok: boolean;
  durationMs: number;
  node: string;
  metrics: Metric[];
  info: Record<string, unknown>;
  error?: string;
}

export const atMost = (value: number): Target => ({ kind: 'max', value });
export const atLeast = (value: number): Target => ({ kind: 'min', value });

export const describeTarget = (target: Target | undefined): string =>
  target === undefined ? '' : `${target.kind === 'max' ? '<=' : '>='} ${target.value}`;

const meets = (value: number, target: Target): boolean => (target.kind === 'max' ? value <= target.value : value >= target.value);

export class BenchReport {
  readonly metrics: Metric[] = [];
  readonly info: Record<string, unknown> = {};

  constructor(readonly bench: string) {}

  metric(name: string, value: number, unit: string, target?: Target, detail?: Record<string, unknown>): Metric {
    const metric: Metric = {
      name,
      value: round(value),
      unit,
      ...(target ? { target, ok: meets(value, target) } : {}),
      ...(detail ? { detail } : {}),
    };
    this.metrics.push(metric);
    this.log(
      `  ${name}: ${metric.value} ${unit}${target ? `  (target ${describeTarget(target)}: ${metric.ok ? 'ok' : 'MISSED'})` : ''}`,
    );
    return metric;
  }

  /** The p50 and p99 of a latency summary as two metrics, with an optional target on the p99. */
  latency(name: string, summary: Summary, p99Target?: Target, detail?: Record<string, unknown>): void {
    const shared = {
      count: summary.count,
      p90: round(summary.p90),
      max: round(summary.max),
      mean: round(summary.mean),
      ...detail,
    };
    this.metric(`${name} p50`, summary.p50, 'ms', undefined, shared);
    this.metric(`${name} p99`, summary.p99, 'ms', p99Target, shared);
  }

  note(key: string, value: unknown): void {
    this.info[key] = value;
    this.log(`  ${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  }

  log(line: string): void {
    process.stdout.write(`${line}\n`);
  }

  result(durationMs: number, error?: unknown): BenchResult {
    const ok = error === undefined && this.metrics.every((metric) => metric.ok !== false);
    return {
      bench: this.bench,
      quick: QUICK,
      ok,
      durationMs: Math.round(durationMs),
      node: process.version,
      metrics: this.metrics,
      info: this.info,
      ...(error !== undefined ? { error: error instanceof Error ? (error.stack ?? error.message) : String(error) } : {}),
    };
  }
}
