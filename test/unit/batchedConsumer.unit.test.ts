/**
 * consumeInBatches (src/projections/batchedConsumer.ts): one batch per page the subscription reads (a log
 * commit's events), never more than maxBatch, every item once and in order, and a slow apply slows the reading.
 */
import { consumeInBatches } from '../../src/projections/batchedConsumer';

/** A subscription that yields `pages` one after the other, each only once `release(i)` has been called for it (page 0 at once). */
function pagedSubscription(pages: number[][]): {
  subscription: AsyncIterable<number>;
  release: (page: number) => void;
  pulled: () => number;
} {
  const gates = pages.map(() => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  });
  gates[0].open();
  let pulled = 0;
  async function* iterate(): AsyncGenerator<number> {
    for (let page = 0; page < pages.length; page++) {
      await gates[page].opened;
      for (const item of pages[page]) {
        pulled++;
        yield item;
      }
    }
  }
  return { subscription: iterate(), release: (page) => gates[page]?.open(), pulled: () => pulled };
}

const range = (from: number, count: number) => Array.from({ length: count }, (_unused, i) => from + i);

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Consumes `subscription` to its end (the queue holds up to 100) and returns the batches applied, in order. */
async function batchesOf(
  subscription: AsyncIterable<number>,
  maxBatch: number,
  afterEach: (applied: number, batches: number[][]) => Promise<void> = async () => undefined,
  splitFrom = Infinity,
  together: (before: number, after: number) => boolean = () => false,
): Promise<number[][]> {
  const batches: number[][] = [];
  await consumeInBatches(subscription, {
    maxQueued: 100,
    maxBatch,
    splitFrom,
    together,
    apply: async (batch) => {
      batches.push(batch);
      await afterEach(batches.length, batches);
    },
    close: async () => undefined,
  });
  return batches;
}

describe('consumeInBatches', () => {
  it('given pages handed over an item at a time, when consumed, then each page is one batch, in order', async () => {
    const pages = [
      [1, 2, 3, 4, 5],
      [6, 7, 8],
      [9, 10, 11, 12],
    ];
    const { subscription, release } = pagedSubscription(pages);
    const batches = await batchesOf(subscription, 100, async (applied) => {
      await tick(); // the store answers on a later turn, as a thread or a server does
      release(applied); // the next commit lands once this one is applied
    });
    expect(batches).toEqual(pages);
  });

  it('given a page larger than maxBatch, when consumed, then it is cut at maxBatch and nothing is lost', async () => {
    const { subscription } = pagedSubscription([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]);
    const batches = await batchesOf(subscription, 4);
    expect(batches).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10],
    ]);
  });

  it('given pages of splitFrom items or more, when consumed, then each is applied in two halves and smaller ones whole', async () => {
    const pages = [range(0, 8), range(8, 5), range(13, 4), range(17, 9)];
    const { subscription, release } = pagedSubscription(pages);
    const batches = await batchesOf(
      subscription,
      100,
      async (_count, sofar) => {
        await tick();
        const applied = sofar.flat().length;
        const whole = pages.findIndex((_page, i) => pages.slice(0, i + 1).flat().length === applied);
        if (whole >= 0) release(whole + 1); // a closed loop of callers: the next page lands once this one is applied
      },
      8,
    );
    expect(batches).toEqual([range(0, 4), range(4, 4), range(8, 5), range(13, 4), range(17, 5), range(22, 4)]);
  });

  it('given a split page, when the next page lands while its second half waits, then that half is applied alone and whole', async () => {
    const { subscription, release } = pagedSubscription([range(0, 10), range(10, 10)]);
    const batches = await batchesOf(
      subscription,
      100,
      async (applied) => {
        if (applied === 1) release(1); // the first half's callers send again before the second half is applied ...
        await tick(); // ... and their whole page is queued behind it
      },
      10,
    );
    expect(batches).toEqual([range(0, 5), range(5, 5), range(10, 5), range(15, 5)]);
  });

  it("given a page of splitFrom items or more, when its middle falls within one caller's items, then the cut moves to the nearest boundary, and a page of one caller is not split", async () => {
    const caller = (item: number) => (item < 12 ? 'A' : item < 22 ? String(item) : 'B'); // 0-11 A's, 12-21 one each, 22-31 B's
    const { subscription, release } = pagedSubscription([range(0, 16), range(16, 6), range(22, 10)]);
    const batches = await batchesOf(
      subscription,
      100,
      async (_count, sofar) => {
        const applied = sofar.flat().length;
        if (applied === 16 || applied === 22) release(applied === 16 ? 1 : 2);
        await tick();
      },
      8,
      (before, after) => caller(before) === caller(after),
    );
    // 16: the middle (8) is within A's items, the nearest boundary is 12; 6: below splitFrom; 10 of B's: never split
    expect(batches).toEqual([range(0, 12), range(12, 4), range(16, 6), range(22, 10)]);
  });

  it('given an apply that has not answered, when the queue holds maxQueued items, then the subscription is not read further', async () => {
    const { subscription, pulled } = pagedSubscription([Array.from({ length: 50 }, (_unused, i) => i)]);
    let answer!: () => void;
    const firstApplied = new Promise<number[]>((seen) => {
      let calls = 0;
      void consumeInBatches(subscription, {
        maxQueued: 10,
        maxBatch: 5,
        splitFrom: Infinity,
        together: () => false,
        apply: (batch) => {
          if (calls++ === 0) {
            seen(batch);
            return new Promise<void>((resolve) => (answer = resolve));
          }
          return Promise.resolve();
        },
        close: async () => undefined,
      });
    });
    expect(await firstApplied).toEqual([0, 1, 2, 3, 4]);
    await tick(); // the pump had every chance to read on
    // 5 in the first batch, then the queue filled up to maxQueued (10) and the pump waits for space
    expect(pulled()).toBe(15);
    answer();
  });

  it('given an apply that fails, when consumed, then the subscription is closed and the failure is rethrown', async () => {
    const { subscription } = pagedSubscription([[1, 2, 3]]);
    const closed = jest.fn(async () => undefined);
    await expect(
      consumeInBatches(subscription, {
        maxQueued: 10,
        maxBatch: 10,
        splitFrom: Infinity,
        together: () => false,
        apply: async () => {
          throw new Error('views unavailable');
        },
        close: closed,
      }),
    ).rejects.toThrow('views unavailable');
    expect(closed).toHaveBeenCalledTimes(1);
  });
});
