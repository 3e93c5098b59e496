/** Process memory figures. Benchmarks run with --expose-gc (bench/run.js) so that RSS is read after a full collection. */

const MB = 1024 * 1024;

export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

export interface MemoryFigures {
  rssMb: number;
  heapUsedMb: number;
  externalMb: number;
}

export function memoryMb(afterGc = true): MemoryFigures {
  if (afterGc) collectGarbage();
  const usage = process.memoryUsage();
  return {
    rssMb: Math.round(usage.rss / MB),
    heapUsedMb: Math.round(usage.heapUsed / MB),
    externalMb: Math.round(usage.external / MB),
  };
}
