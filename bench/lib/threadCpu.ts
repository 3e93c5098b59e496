/**
 * CPU time of each thread of a process, and the machine's busy time, from /proc (Linux; empty or null
 * elsewhere). For the HTTP benches: which of the server's threads a request costs (the event loop, the log's
 * writer thread, the views thread, the checkpointing sidecars, V8's helpers), how long its event loop waited
 * for a CPU while runnable, and how busy the whole machine was, the load generator included: on a small
 * machine a latency tail follows how full the cores are.
 */
import fs from 'node:fs';

export interface ThreadCpu {
  /** Time on a CPU, ns. */
  cpuNs: number;
  /** Time runnable but waiting for a CPU (run-queue wait), ns. */
  waitNs: number;
}

/** Each thread of `pid` by thread id (the process's own id is its main thread). */
export function threadCpu(pid: number): Map<string, ThreadCpu> {
  const threads = new Map<string, ThreadCpu>();
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads; // not Linux, or the process is gone
  }
  for (const tid of tids) {
    try {
      const [cpuNs, waitNs] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      threads.set(tid, { cpuNs, waitNs });
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/** What each thread spent between two readings (threads that started meanwhile count from zero). */
export function threadCpuSince(before: Map<string, ThreadCpu>, after: Map<string, ThreadCpu>): Map<string, ThreadCpu> {
  const spent = new Map<string, ThreadCpu>();
  for (const [tid, now] of after) {
    const then = before.get(tid) ?? { cpuNs: 0, waitNs: 0 };
    spent.set(tid, { cpuNs: now.cpuNs - then.cpuNs, waitNs: now.waitNs - then.waitNs });
  }
  return spent;
}

/** The machine's CPU time so far, busy and in all, in ticks (/proc/stat's first line), or null. */
export function machineCpuTicks(): { busy: number; total: number } | null {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.slice(0, 8).reduce((sum, ticks) => sum + ticks, 0); // user..steal (guest is inside user)
    const idle = fields[3] + (fields[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}
