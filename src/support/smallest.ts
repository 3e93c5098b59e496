/**
 * The k smallest of a stream of items, in order: a max-heap of at most k items, so a list of n costs n log k
 * and k items of memory instead of a sort of all n. Why: the unwoken list asks for its oldest 1,000 (audit verify,
 * the heartbeat) among every unwoken message; sorting all of them (600,000 at 1M events) took ~3 s of verify.
 */
export class Smallest<T> {
  private readonly heap: T[] = [];

  constructor(
    private readonly k: number,
    /** A total order: negative when a comes first. */
    private readonly compare: (a: T, b: T) => number,
  ) {}

  offer(item: T): void {
    const heap = this.heap;
    if (this.k <= 0) return;
    if (heap.length < this.k) {
      heap.push(item);
      this.up(heap.length - 1);
    } else if (this.compare(item, heap[0]) < 0) {
      heap[0] = item;
      this.down(0);
    }
  }

  /** The items kept, smallest first. */
  sorted(): T[] {
    return [...this.heap].sort(this.compare);
  }

  private up(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(heap[i], heap[parent]) <= 0) return;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  private down(i: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && this.compare(heap[left], heap[largest]) > 0) largest = left;
      if (right < heap.length && this.compare(heap[right], heap[largest]) > 0) largest = right;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest], heap[i]];
      i = largest;
    }
  }
}
