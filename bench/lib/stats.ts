/** Latency statistics for benchmarks: nearest-rank percentiles and medians over runs. */

export interface Summary {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length - 1, Math.max(0, rank - 1))];
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort();
  const values = Array.from(sorted);
  const total = values.reduce((sum, v) => sum + v, 0);
  return {
    count: values.length,
    min: values[0] ?? Number.NaN,
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: values[values.length - 1] ?? Number.NaN,
    mean: values.length ? total / values.length : Number.NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(Float64Array.from(values).sort() as unknown as number[], 50);
}

/** Rounds for display and JSON: keeps 3 significant decimals on small numbers, integers on large ones. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value);
  if (abs >= 10) return Math.round(value * 10) / 10;
  if (abs >= 1) return Math.round(value * 100) / 100;
  return Math.round(value * 10000) / 10000;
}
