/** Quick mode (BENCH_QUICK=1): every size scaled down ~10x, for smoke runs of the benchmarks themselves. */

export const QUICK = ['1', 'true', 'yes'].includes((process.env.BENCH_QUICK ?? '').toLowerCase());

/** `full` normally; a tenth of it (at least `minimum`) in quick mode. */
export function scaled(full: number, minimum = 1): number {
  return QUICK ? Math.max(minimum, Math.round(full / 10)) : full;
}
