/**
 * CatchUpProgress (src/projections/catchUpProgress.ts): a long catch-up reports how it is going at most once per
 * interval of the injected clock, with the rate so far and the time left at that rate.
 */
import { CatchUpProgress, describeCatchUp } from '../../src/projections/catchUpProgress';

/** A clock the test moves by hand. */
function handClock(startMs = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let at = startMs;
  return { now: () => at, advance: (ms) => (at += ms) };
}

/** What the runner does after each page: a report when one is due, with the events applied so far and the head. */
const afterPage = (progress: CatchUpProgress, events: number, position: bigint, head: bigint | null) =>
  progress.due() ? progress.report(events, position, head) : null;

describe('CatchUpProgress', () => {
  it('given a catch-up from empty views to a head of 1,000, when pages are applied within the interval, then it says nothing', () => {
    const clock = handClock();
    const progress = new CatchUpProgress(clock.now, null, 10_000);
    clock.advance(4_000);
    expect(afterPage(progress, 100, 100n, 1000n)).toBeNull();
    clock.advance(5_999);
    expect(afterPage(progress, 200, 200n, 1000n)).toBeNull();
  });

  it('given a catch-up from empty views to a head of 1,000, when the interval has passed, then it reports the events, the share and the time left', () => {
    const clock = handClock();
    const progress = new CatchUpProgress(clock.now, null, 10_000);
    clock.advance(4_000);
    afterPage(progress, 100, 100n, 1000n);
    clock.advance(6_000);
    const report = afterPage(progress, 250, 250n, 1000n);
    expect(report).toEqual({
      events: 250,
      position: '250',
      head: '1000',
      percent: 25,
      perSecond: 25,
      remainingSeconds: 30, // 750 positions left at 25 a second
    });
    expect(describeCatchUp(report!)).toBe(
      'projections catching up: 250 events applied, at position 250 of 1000 (25%), 25 events/s, about 30 s left',
    );
  });

  it('given a report just made, when the next page comes before another interval, then nothing; after it, the next report', () => {
    const clock = handClock();
    const progress = new CatchUpProgress(clock.now, 4_000n, 10_000);
    clock.advance(10_000);
    expect(afterPage(progress, 12_000, 16_000n, 100_000n)?.percent).toBe(12); // 12,000 of the 96,000 positions after the checkpoint
    clock.advance(9_000);
    expect(afterPage(progress, 24_000, 28_000n, 100_000n)).toBeNull();
    clock.advance(1_000);
    const report = afterPage(progress, 36_000, 40_000n, 100_000n)!;
    expect(report).toMatchObject({ events: 36_000, percent: 37, perSecond: 1_800, remainingSeconds: 33 });
    expect(describeCatchUp(report)).toContain(
      '36,000 events applied, at position 40000 of 100000 (37%), 1,800 events/s, about 33 s left',
    );
  });

  it('given a catch-up whose head is not known, when a report is due, then it gives the position and the rate without a share or an end', () => {
    const clock = handClock();
    const progress = new CatchUpProgress(clock.now, null, 10_000);
    clock.advance(20_000);
    const report = afterPage(progress, 50_000, 50_000n, null)!;
    expect(report).toMatchObject({ head: null, percent: null, perSecond: 2_500, remainingSeconds: null });
    expect(describeCatchUp(report)).toBe('projections catching up: 50,000 events applied, at position 50000, 2,500 events/s');
  });
});
