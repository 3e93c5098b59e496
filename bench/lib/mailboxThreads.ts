/**
 * Which thread of an embedded mailbox (this process) an operation costs: on-CPU time and run-queue wait per
 * operation of the event loop, the views thread, the log's writer thread and everything else (V8's helpers,
 * the checkpointing sidecars), from /proc (threadCpu.ts; Linux only, empty elsewhere).
 *
 * Why: one caller's durable send runs these one after another (the event loop decides, the writer commits, the
 * event loop hands the event to the views thread, which commits its transaction), so a sequential operation's
 * latency is about their on-CPU times added up, plus the fsync's wait, plus each wake-up's wait for a CPU. On a
 * loaded machine the wait grows and the CPU stays: the CPU per thread is the figure to compare between builds.
 *
 * The threads are told apart by when they start: the views thread with the mailbox (`opened()`), the writer
 * thread at the first commit (`firstCommitDone()`); of the threads that appeared at each step, the one that spent
 * the most while measured is taken (V8 may start a helper at the same moment, which spends far less).
 */
import { threadCpu, threadCpuSince, type ThreadCpu } from './threadCpu';

export interface ThreadShare {
  /** On-CPU microseconds per operation. */
  cpuUs: number;
  /** Microseconds per operation runnable but waiting for a CPU. */
  waitUs: number;
}

export interface MailboxThreadCosts {
  eventLoop: ThreadShare;
  views: ThreadShare;
  writer: ThreadShare;
  others: ThreadShare;
}

const tids = (): Set<string> => new Set(threadCpu(process.pid).keys());

export function mailboxThreads(): {
  opened(): void;
  firstCommitDone(): void;
  start(): void;
  read(operations: number): MailboxThreadCosts | null;
} {
  const before = tids();
  let atOpen = new Set<string>();
  let atCommit = new Set<string>();
  let startedAt = new Map<string, ThreadCpu>();
  const share = (spent: ThreadCpu | undefined, operations: number): ThreadShare => ({
    cpuUs: (spent?.cpuNs ?? 0) / operations / 1000,
    waitUs: (spent?.waitNs ?? 0) / operations / 1000,
  });
  /** Of `candidates`, the thread that spent the most. */
  const busiest = (spent: Map<string, ThreadCpu>, candidates: Iterable<string>): string | null => {
    let found: string | null = null;
    for (const tid of candidates)
      if (found === null || (spent.get(tid)?.cpuNs ?? 0) > (spent.get(found)?.cpuNs ?? 0)) found = tid;
    return found;
  };
  return {
    opened: () => {
      atOpen = tids();
    },
    firstCommitDone: () => {
      atCommit = tids();
    },
    start: () => {
      startedAt = threadCpu(process.pid);
    },
    read: (operations) => {
      const spent = threadCpuSince(startedAt, threadCpu(process.pid));
      if (spent.size === 0) return null;
      const main = String(process.pid);
      const views = busiest(
        spent,
        [...atOpen].filter((tid) => !before.has(tid) && tid !== main),
      );
      const writer = busiest(
        spent,
        [...atCommit].filter((tid) => !atOpen.has(tid) && tid !== main),
      );
      const others: ThreadCpu = { cpuNs: 0, waitNs: 0 };
      for (const [tid, cost] of spent) {
        if (tid === main || tid === views || tid === writer) continue;
        others.cpuNs += cost.cpuNs;
        others.waitNs += cost.waitNs;
      }
      return {
        eventLoop: share(spent.get(main), operations),
        views: share(views === null ? undefined : spent.get(views), operations),
        writer: share(writer === null ? undefined : spent.get(writer), operations),
        others: share(others, operations),
      };
    },
  };
}
