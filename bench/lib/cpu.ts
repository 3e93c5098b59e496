/**
 * CPU time spent by this process (user + system), in ms. On a shared machine
 * wall-clock figures swing with other processes' load; CPU time per operation
 * is the steadier figure for before/after comparisons.
 */
import fs from 'node:fs';
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

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * CPU time of the main JavaScript thread alone (Linux: /proc/self/task/<pid>/stat,
 * 10 ms resolution), or null elsewhere. Work on the main thread cannot use a
 * second core, so operations / main-thread CPU seconds estimates the rate on
 * an otherwise idle machine (GC helper threads run beside it).
 */
export function mainThreadCpuMs(): number | null {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000; // utime, stime
  } catch {
    return null;
  }
}
