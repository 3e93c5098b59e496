/**
 * CPU time spent by this process (user + system), in ms. On a shared machine
 * wall-clock figures swing with other processes' load; CPU time per operation
 * is the steadier figure for before/after comparisons.
 */
import os from 'node:os';

export function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Measures the CPU time `work` costs this process (all threads). */
export async function cpuOf<T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const before = cpuMs();
  const result = await work();
  return { result, cpuMs: cpuMs() - before };
}

/** 1-minute load average against the number of cores, e.g. "4.2 on 2 cores". */
export const loadAverage = (): string => `${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`;
