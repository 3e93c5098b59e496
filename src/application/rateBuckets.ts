/**
 * Token buckets shared by every API node (Redis when it is configured), so that three nodes
 * allow an agent the configured rate, not three times it. Without them each process keeps its own.
 */
export interface RateBuckets {
  /** Takes one token from `key`'s bucket: resolves to 0 when taken, else the milliseconds until one is available. */
  take(key: string, perSecond: number, burst: number): Promise<number>;
  close(): Promise<void>;
}
